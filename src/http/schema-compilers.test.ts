// The kept schema compilers (schema-compilers.ts): an app built after another in one process validates and
// serializes as the first did, with the functions compiled for the first; a headers schema is refused at start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { keptSchemaCompilers } from './schema-compilers.ts';

const kept = () =>
  (globalThis as { [key: symbol]: { functions: Map<string, unknown> } })[Symbol.for('cds-schema-compilers')]!;

function app() {
  const instance = Fastify({
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: true, useDefaults: true, allErrors: true } },
    schemaController: { compilersFactory: keptSchemaCompilers() },
  });
  instance.get(
    '/things/:id',
    {
      schema: {
        params: { type: 'object', properties: { id: { type: 'integer', minimum: 1 } }, required: ['id'] },
        querystring: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } } } },
        response: {
          200: {
            type: 'object',
            properties: { id: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
          },
        },
      },
    },
    // `secret` is not in the response schema: the serializer leaves it out.
    (request, reply) => reply.send({ ...(request.params as object), ...(request.query as object), secret: 'x' }),
  );
  return instance;
}

test('a second app in the process answers as the first, with the functions the first compiled', async () => {
  const first = app();
  await first.ready();
  const size = kept().functions.size;
  assert.ok(size >= 3, 'the params, querystring and response functions are kept');
  const second = app();
  await second.ready();
  assert.equal(kept().functions.size, size, 'the second app compiled nothing new');
  for (const instance of [first, second]) {
    const ok = await instance.inject('/things/7?tags=a');
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.body, '{"id":7,"tags":["a"]}', 'coerced by the validator, shaped by the serializer');
    const bad = await instance.inject('/things/0');
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().message, /must be >= 1/);
  }
  await Promise.all([first.close(), second.close()]);
});

test('a route with a headers schema is refused at start, naming why', async () => {
  const instance = Fastify({ schemaController: { compilersFactory: keptSchemaCompilers() } });
  instance.get(
    '/h',
    { schema: { headers: { type: 'object', properties: { 'X-Thing': { type: 'string' } } } } },
    (_request, reply) => reply.send('x'),
  );
  await assert.rejects(async () => {
    await instance.ready();
  }, /does not lower-case its names/);
});
