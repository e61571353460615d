import { PageHeading } from '../components/page.tsx';

export function ApiKeysScreen() {
  return <PageHeading title="API keys" />;
}
