import type { Me } from '../api/client.ts';
import { PageHeading } from '../components/page.tsx';

export function CustomersScreen(_props: { me: Me }) {
  return <PageHeading title="Customers" />;
}
