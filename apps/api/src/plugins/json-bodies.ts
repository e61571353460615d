import type { FastifyInstance } from 'fastify';
import { DomainError } from '@hostctl/domain';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * JSON bodies through Fastify's own safe parser (prototype-poisoning checks), except that an empty
 * body is "no body": `POST /start` from a client that always sends Content-Type: application/json
 * must not fail. Routes with a body schema still reject the missing body with a 400.
 *
 * The bytes must be UTF-8 (RFC 8259): a `charset` other than utf-8 is a 415 and invalid byte
 * sequences a 400, rather than being silently replaced by U+FFFD and stored. A leading BOM is
 * dropped, which RFC 8259 allows. Every other media type (text/plain, forms, multipart,
 * merge-patch) has no parser and gets Fastify's 415.
 */
export function registerJsonBodies(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  // Fastify's built-in text/plain parser would hand a string to routes that expect an object.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1];
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
      done(
        new DomainError('unsupported_media_type', `charset ${charset} is not supported; send UTF-8 JSON`),
        undefined,
      );
      return;
    }
    let text: string;
    try {
      text = utf8.decode(body as Buffer);
    } catch {
      done(new DomainError('malformed_json', 'the request body is not valid UTF-8'), undefined);
      return;
    }
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    void parse(request, text, done);
  });
}
