import { useEffect, type ReactNode } from 'react';

/** A screen's one h1 (also the document title) with its actions beside it. */
export function PageHeading({ title, children }: { title: string; children?: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · hostctl`;
  }, [title]);
  return (
    <div className="page-heading">
      <h1>{title}</h1>
      {children ? <div className="actions">{children}</div> : null}
    </div>
  );
}
