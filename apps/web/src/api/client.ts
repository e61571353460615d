import { createApiClient } from '@hostctl/api-client';

/**
 * The dashboard's API client (@hostctl/api-client, typed from the OpenAPI document). Same origin:
 * the session cookie goes along, and browsers add the Origin header the API checks on
 * cookie-authenticated writes.
 */
export const api = createApiClient({ baseUrl: window.location.origin, credentials: 'same-origin' });
