import type { FastifyInstance } from 'fastify';

/**
 * JSON bodies through Fastify's own safe parser (prototype-poisoning checks), except that an empty
 * body is "no body": `POST /start` from a client that always sends Content-Type: application/json
 * must not fail. Routes with a body schema still reject the missing body with a 400.
 */
export function registerJsonBodies(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    void parse(request, text, done);
  });
}
