import { createHash, sign, type KeyObject } from 'node:crypto';

/** RFC 8555 §6.2 request signing with an ES256 account key (RFC 7515 flattened JSON). */
export interface AccountKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

const b64u = (data: Buffer | string) => Buffer.from(data).toString('base64url');

/** The public JWK with only its required members (RFC 7638 §3.2), in lexicographic order. */
function publicJwk(key: AccountKey): { crv: string; kty: string; x: string; y: string } {
  const jwk = key.publicKey.export({ format: 'jwk' });
  return { crv: String(jwk.crv), kty: String(jwk.kty), x: String(jwk.x), y: String(jwk.y) };
}

/** RFC 7638 thumbprint: the second half of every key authorization. */
function thumbprint(key: AccountKey): string {
  return b64u(
    createHash('sha256')
      .update(JSON.stringify(publicJwk(key)))
      .digest(),
  );
}

/** The key authorization (RFC 8555 §8.1): what an http-01 challenge answers as its body (§8.3). */
export function keyAuthorization(token: string, key: AccountKey): string {
  return `${token}.${thumbprint(key)}`;
}

/** The TXT value of a dns-01 challenge (RFC 8555 §8.4). */
export function dnsChallengeValue(token: string, key: AccountKey): string {
  return b64u(createHash('sha256').update(keyAuthorization(token, key)).digest());
}

/**
 * One signed body. `payload` undefined is POST-as-GET (empty payload, §6.3). `kid` is the account
 * URL once there is one; before that (newAccount) the JWK itself identifies the key.
 */
export function signRequest(
  key: AccountKey,
  header: { url: string; nonce: string; kid?: string },
  payload: object | undefined,
): string {
  const protectedHeader = b64u(
    JSON.stringify({
      alg: 'ES256',
      nonce: header.nonce,
      url: header.url,
      ...(header.kid ? { kid: header.kid } : { jwk: publicJwk(key) }),
    }),
  );
  const body = payload === undefined ? '' : b64u(JSON.stringify(payload));
  const signature = sign('sha256', Buffer.from(`${protectedHeader}.${body}`), {
    key: key.privateKey,
    dsaEncoding: 'ieee-p1363',
  });
  return JSON.stringify({ protected: protectedHeader, payload: body, signature: b64u(signature) });
}
