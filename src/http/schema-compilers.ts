// The compilers of the routes' schemas (Fastify's own: Ajv for what a request brings, fast-json-stringify for what
// an answer sends), with each compiled function kept for the process, keyed by what it is compiled from: the
// schema, the shared schemas it may refer to, and the compiler's options. Fastify compiles every route's schemas
// each time an app is built; a schema that was compiled once is the same function the next time.
// One app per process (the service, a `cds` command) compiles exactly as before. Where several apps are built in
// one process (the test files, each a bundle of its own, run one after another in a worker: test/runner/README.md),
// compiling took ~35 s of the ~400 s of CPU of the embedded pass; each later app now finds its functions here.
import { createHash } from 'node:crypto';
import { default as validatorSelector, type ValidatorFactory } from '@fastify/ajv-compiler';
import { default as serializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';

type Compile = (route: { schema: unknown; httpPart?: string; [other: string]: unknown }) => unknown;
type Builder = (externalSchemas: unknown, options: unknown) => Compile;

/**
 * At most this many compiled functions are kept (the service's routes compile a few hundred); past it, a schema is
 * compiled as Fastify would, and not kept. Each entry is a function Fastify's routes hold anyway, and a 40-byte key.
 */
export const MAX_KEPT = 4_000;

interface Kept {
  functions: Map<string, unknown>;
  /** Fastify's default builders, one for the process, so that one Ajv per set of shared schemas serves every app. */
  validators: Builder;
  serializers: Builder;
}

// On globalThis, not in this module: under `npm test` each test file's bundle has its own copy of this module, and
// the functions are to be found by the next file's apps (test/runner/README.md, "Why src/ keeps … on globalThis").
const KEPT = Symbol.for('cds-schema-compilers');
function kept(): Kept {
  const shared = globalThis as { [KEPT]?: Kept };
  return (shared[KEPT] ??= {
    functions: new Map(),
    validators: (validatorSelector as unknown as () => Builder)(),
    serializers: (serializerSelector as unknown as () => Builder)(),
  });
}

const digest = (text: string) => createHash('sha1').update(text).digest('base64');

/** A builder (Fastify's `compilersFactory` entry) whose compiled functions are kept in `kind`'s part of the memo. */
function keeping(kind: 'validators' | 'serializers'): Builder {
  return (externalSchemas, options) => {
    const shared = kept();
    // What every function of this app's compiler depends on besides its own schema.
    const context = JSON.stringify([kind, externalSchemas, options]);
    let compile: Compile | undefined;
    return (route) => {
      // Fastify lower-cases a headers schema's names only for its own validator compiler: with this one it would
      // not. No route has one; one that does is refused here, at start, not answered differently.
      if (kind === 'validators' && route.httpPart === 'headers')
        throw new Error('a headers schema: src/http/schema-compilers.ts does not lower-case its names as Fastify does');
      const key = digest(`${context}\n${route.httpPart ?? ''}\n${JSON.stringify(route.schema)}`);
      const found = shared.functions.get(key);
      if (found !== undefined) return found;
      compile ??= shared[kind](externalSchemas, options);
      const made = compile(route);
      if (shared.functions.size < MAX_KEPT) shared.functions.set(key, made);
      return made;
    };
  };
}

/** Fastify's `schemaController.compilersFactory`: its own compilers, each function compiled once per process. */
export function keptSchemaCompilers(): { buildValidator: ValidatorFactory; buildSerializer: SerializerFactory } {
  return {
    buildValidator: keeping('validators') as unknown as ValidatorFactory,
    buildSerializer: keeping('serializers') as unknown as SerializerFactory,
  };
}
