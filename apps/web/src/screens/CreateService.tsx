import type { Me } from '../api/client.ts';
import { PageHeading } from '../components/page.tsx';

export function CreateServiceScreen(_props: { me: Me }) {
  return <PageHeading title="Create a service" />;
}
