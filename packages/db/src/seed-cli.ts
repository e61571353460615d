// `pnpm db:seed`: the development data set (idempotent). Accounts match apps/dev-idp/accounts.json.
import { createDb } from './client.js';
import { keyringFromEnvironment } from './vault/keyring-settings.js';
import { createBootstrapStore } from './stores/bootstrap.store.js';

const url = process.env.DATABASE_URL;
if (!url) {
  console.error('DATABASE_URL is required');
  process.exit(2);
}
const db = createDb({ url, max: 2, keys: keyringFromEnvironment(process.env) });
const store = createBootstrapStore(db);
const acme = await store.ensureCustomer('acme');
await store.ensureCustomer('globex');
await store.ensureUser({ email: 'admin@example.test', name: 'Ada Admin', role: 'admin', customerId: null });
await store.ensureUser({
  email: 'operator@example.test',
  name: 'Otto Operator',
  role: 'operator',
  customerId: null,
});
await store.ensureUser({
  email: 'viewer@acme.example.test',
  name: 'Vera Viewer',
  role: 'viewer',
  customerId: acme.id,
});
await store.ensureUser({
  email: 'operator@acme.example.test',
  name: 'Olga Acme',
  role: 'operator',
  customerId: acme.id,
});
console.log(JSON.stringify({ seeded: true, customers: ['acme', 'globex'] }));
await db.$disconnect();
