import { useEffect } from 'react';
import { signInHref } from '../session.ts';

/** Shown at any address while signed out: sign-in brings the user back to that address. */
export function SignedOutScreen({ returnTo, signedIn }: { returnTo: string; signedIn: boolean }) {
  useEffect(() => {
    document.title = 'Sign in · hostctl';
  }, []);
  return (
    <main id="main" className="centered signed-out">
      <h1>hostctl</h1>
      <p>{signedIn ? 'You are signed in.' : 'You are signed out.'} Sign in to manage your services.</p>
      <a className="button primary" href={signInHref(signedIn ? '/' : returnTo)}>
        Sign in
      </a>
    </main>
  );
}
