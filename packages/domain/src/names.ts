/**
 * A service name becomes a DNS label of its public URL, so it follows RFC 1123 label rules in
 * lowercase: letters, digits and inner hyphens.
 */
export const SERVICE_NAME_PATTERN = '^[a-z0-9](?:[a-z0-9-]{1,61})[a-z0-9]$';
const serviceNameRegex = new RegExp(SERVICE_NAME_PATTERN);

export function isValidServiceName(name: string): boolean {
  return serviceNameRegex.test(name);
}

/** Docker object names are derived from the service id so that every retry finds the same objects. */
export function dockerNamePrefix(serviceId: string): string {
  return `hostctl-${serviceId.replace(/-/g, '').slice(0, 12)}`;
}
