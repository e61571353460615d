import { sign, type KeyObject } from 'node:crypto';

/**
 * A PKCS#10 certificate request (RFC 2986) in DER, built by hand: node:crypto signs but has no
 * CSR builder. Only what ACME needs: an ECDSA P-256 key, the first name as the subject's CN and
 * every name in a subjectAltName extension request (CAs read the SAN, RFC 8555 §7.4).
 */
export function certificateRequest(names: readonly string[], key: KeyObject, publicKey: KeyObject): Buffer {
  const subject = seq(set(seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from(names[0]!)))));
  const san = seq(...names.map((name) => tlv(0x82, Buffer.from(name, 'ascii'))));
  const extensions = seq(seq(oid('2.5.29.17'), tlv(0x04, san)));
  const attributes = tlv(0xa0, seq(oid('1.2.840.113549.1.9.14'), set(extensions)));
  const info = seq(
    Buffer.from([0x02, 0x01, 0x00]),
    subject,
    publicKey.export({ type: 'spki', format: 'der' }),
    attributes,
  );
  const signature = sign('sha256', info, { key, dsaEncoding: 'der' });
  return seq(info, seq(oid('1.2.840.10045.4.3.2')), tlv(0x03, Buffer.from([0]), signature));
}

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  if (n < 0x100) return Buffer.from([0x81, n]);
  if (n < 0x10000) return Buffer.from([0x82, n >> 8, n & 0xff]);
  throw new Error('DER value too long');
}

function tlv(tag: number, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

const seq = (...parts: Buffer[]) => tlv(0x30, ...parts);
const set = (...parts: Buffer[]) => tlv(0x31, ...parts);

function oid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number);
  const bytes = [first! * 40 + second!];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let value = arc >> 7; value > 0; value >>= 7) chunk.unshift((value & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}
