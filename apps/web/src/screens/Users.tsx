import { PageHeading } from '../components/page.tsx';

export function UsersScreen() {
  return <PageHeading title="Users" />;
}
