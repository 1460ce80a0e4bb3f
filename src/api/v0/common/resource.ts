// A REST resource as declarations: its list, its detail and its dumps, named once. The registry (../resources.ts)
// lists every resource; it feeds the routes, the landing page, the dumps' build and the conformance test.
import type { FastifyInstance } from 'fastify';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import type { DumpSource } from '../../../dumps/dump-source.ts';
import { sql } from 'kysely';
import { detailRoute, listRoute, type DetailDefinition, type ListDefinition } from './routes.ts';

/** One operation, declared: registered by the registry, listed by the conformance test. */
export interface Operation {
  operationId: string;
  kind: 'list' | 'detail';
  register(app: FastifyInstance): void;
  /**
   * For an operation with path parameters: those of one record the database serves, or undefined when it has
   * none. The conformance test requests every operation with them (test/api-conformance.test.ts).
   */
  example?: (db: Db) => Promise<Record<string, string> | undefined>;
  /**
   * For a resource's list (`/<name>/`, no path parameters): how many records it counts with no filter, what is
   * published of the stored records (`cds status` shows both side by side).
   */
  published?: (db: Db) => Promise<number>;
}

export interface Resource {
  /** The path segment: `/api/v0/<name>/`. */
  name: string;
  operations: Operation[];
  /** Its bulk dumps (`GET /api/v0/dumps/`), one or more, in the order of the manifest (common/dumps.ts). */
  dumps: readonly DumpSource[];
}

export function listOperation<F extends TObject, Item extends TObject, P extends TObject = TObject>(
  def: ListDefinition<F, Item, P>,
  example?: Operation['example'],
): Operation {
  return {
    operationId: def.operationId,
    kind: 'list',
    register: (app) => listRoute(app, def),
    ...(example ? { example } : {}),
  };
}

export function detailOperation<P extends TObject, Row, Body extends TSchema>(
  def: DetailDefinition<P, Row, Body>,
): Operation {
  return { operationId: def.operationId, kind: 'detail', register: (app) => detailRoute(app, def) };
}

type ListParts<F extends TObject, Item extends TObject> = Omit<
  ListDefinition<F, Item>,
  'path' | 'operationId' | 'summary' | 'itemName' | 'params' | 'description'
>;

interface DetailParts<P extends TObject, Row, Body extends TSchema> {
  params: P;
  response: Body;
  fetch: (db: Db, params: Static<P>) => Promise<Row | undefined>;
  /** The body of a row; the row itself by default. */
  present?: (row: Row) => Static<Body>;
  description?: string;
  /** The path parameters of one record the database serves (see Operation.example). */
  example: (db: Db) => Promise<Record<keyof Static<P>, string> | undefined>;
}

/**
 * The usual resource: `GET /<name>/` (`list_<name>`, "List <name>") and, when it has a detail,
 * `GET /<name>/:<param>/…` with the detail's path parameters in order (`get_<noun>`, "Get <noun>").
 * `noun` names the item (`Chapter`): the OpenAPI components and the 404 message.
 */
export function resource<F extends TObject, Item extends TObject, P extends TObject, Row, Body extends TSchema>(
  name: string,
  noun: string,
  declared: {
    description?: string;
    summary?: string;
    list: ListParts<F, Item>;
    detail?: DetailParts<P, Row, Body>;
    dumps: readonly DumpSource[];
  },
): Resource {
  const list = declared.list;
  const operations: Operation[] = [
    {
      ...listOperation({
        path: `/${name}/`,
        operationId: `list_${name}`,
        summary: declared.summary ?? `List ${name}`,
        ...(declared.description ? { description: declared.description } : {}),
        itemName: noun,
        ...list,
      }),
      // The list's own query with no filter: the count of `GET /<name>/`.
      published: async (db: Db) => {
        const rows = await list.query(db, {} as Static<F>, {} as Static<TObject>);
        const counted = await rows
          .clearSelect()
          .select(sql<string>`count(*)`.as('n'))
          .executeTakeFirst();
        return Number(counted?.n ?? 0);
      },
    },
  ];
  const detail = declared.detail;
  if (detail) {
    const params = Object.keys(detail.params.properties).map((key) => `:${key}`);
    operations.push({
      ...detailOperation({
        path: `/${name}/${params.join('/')}`,
        operationId: `get_${noun.toLowerCase()}`,
        summary: `Get ${noun.toLowerCase()}`,
        ...(detail.description ? { description: detail.description } : {}),
        params: detail.params,
        response: detail.response,
        resource: noun,
        fetch: detail.fetch,
        present: detail.present ?? ((row) => row as Static<Body>),
      }),
      example: detail.example,
    });
  }
  return { name, operations, dumps: declared.dumps };
}

/** Registers every operation of the resources, each resource in its own scope. */
export async function registerResources(app: FastifyInstance, resources: readonly Resource[]): Promise<void> {
  for (const { operations } of resources) {
    await app.register((scope) => {
      for (const operation of operations) operation.register(scope);
    });
  }
}
