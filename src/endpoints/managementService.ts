/**
 * Endpoint management (docs/API.md, "Management API"): validate the definition, translate its
 * SQL so that a definition that cannot run is refused with 422 and the line:column of the
 * problem, then save.
 * Every update bumps `version` (EndpointRepository.update), which invalidates cached results.
 *
 * Endpoints may read endpoints (src/endpoints/nesting.ts). A definition is checked with the
 * endpoints it reads (their `@params` are its parameters too; cycles and depth past 5 are 422).
 * A change of an endpoint's query re-checks every endpoint that reads it, directly or not (422
 * naming those it would break), recomputes their parameters and bumps their versions in the same
 * transaction, so their cached results are not used again. Renaming or deleting an endpoint that
 * others read is 409 listing them.
 */
import { ConflictError, NotFoundError, UnprocessableError, type ErrorDetail } from '../errors.js';
import type { SourceLookup } from '../sources/schema.js';
import { initTranslator, SqlError, type SqlWarning } from '../sql/index.js';
import { queryWarnings, type QueryWarning } from './warnings.js';
import { resolveParameters, validateDefinition, validatePatch, type InheritedDeclaration } from './definition.js';
import {
  dependants,
  directReaders,
  inheritedDeclaration,
  loadReadable,
  nestedParameters,
  translateNested,
  type NestedEndpoint,
} from './nesting.js';
import { EndpointRepository, type EndpointFields, type EndpointRecord, type ParameterDeclaration } from './repository.js';
import type { Knex } from 'knex';

export class EndpointManagementService {
  readonly repository: EndpointRepository;

  constructor(
    private readonly knex: Knex,
    private readonly sources: SourceLookup,
  ) {
    this.repository = new EndpointRepository(knex);
  }

  list(): Promise<EndpointRecord[]> {
    return this.repository.list();
  }

  async get(idOrName: string): Promise<EndpointRecord> {
    const found = await this.repository.find(idOrName);
    if (!found) throw notFound(idOrName);
    return found;
  }

  /** `id`: the importer keeps the original's endpoint token as the id (src/import/logflare/catalog.ts); else a new one. */
  async create(body: unknown, id?: string): Promise<SavedEndpoint> {
    const { fields, warnings } = await this.validated(body, undefined, (used, inherited) => validateDefinition(body, used, inherited));
    const row = await this.repository.insert(fields, id).catch(duplicateName(fields.name));
    return { ...row, warnings };
  }

  /** PUT: the whole definition; omitted fields take their defaults. */
  async replace(idOrName: string, body: unknown): Promise<SavedEndpoint> {
    const current = await this.get(idOrName);
    const { fields, warnings } = await this.validated(body, current, (used, inherited) => validateDefinition(body, used, inherited));
    return { ...(await this.save(current, fields)), warnings };
  }

  /** PATCH: only the fields sent change. */
  async patch(idOrName: string, body: unknown): Promise<SavedEndpoint> {
    const current = await this.get(idOrName);
    const { fields, warnings } = await this.validated(body, current, (used, inherited) => validatePatch(current, body, used, inherited));
    return { ...(await this.save(current, fields)), warnings };
  }

  /** 409 listing them when other endpoints read this one. */
  async delete(idOrName: string): Promise<void> {
    const current = await this.get(idOrName);
    const readers = directReaders(await this.repository.list(), current.name, this.sources);
    if (readers.length) throw inUse(`Endpoint "${current.name}" cannot be deleted`, readers);
    if (!(await this.repository.delete(current.id))) throw notFound(idOrName);
  }

  private async save(current: EndpointRecord, fields: EndpointFields): Promise<EndpointRecord> {
    const all = await this.repository.list();
    const readers = dependants(all, current.name, this.sources);
    if (readers.length && fields.name !== current.name) {
      throw inUse(`Endpoint "${current.name}" cannot be renamed`, directReaders(all, current.name, this.sources));
    }
    const readerUpdates = fields.query === current.query ? [] : this.recheckReaders(current, fields, all, readers);
    return this.knex.transaction(async (trx) => {
      const repository = new EndpointRepository(trx);
      const row = await repository.update(current.id, fields).catch(duplicateName(fields.name));
      if (!row) throw notFound(current.id); // deleted meanwhile
      // Their results depend on this query: new parameters where needed, and a new version (new cache keys).
      for (const { id, parameters } of readerUpdates) await repository.update(id, { parameters });
      return row;
    });
  }

  /**
   * The endpoints that read `current` (directly or not), translated with its new definition:
   * 422 naming each one the change would break, else their parameters with the new query's.
   */
  private recheckReaders(
    current: EndpointRecord,
    fields: EndpointFields,
    all: EndpointRecord[],
    readers: EndpointRecord[],
  ): { id: string; parameters: ParameterDeclaration[] }[] {
    const byName = new Map<string, NestedEndpoint>(all.filter((e) => e.id !== current.id).map((e) => [e.name, e]));
    byName.set(fields.name, { ...fields, id: current.id });
    const updates: { id: string; parameters: ParameterDeclaration[] }[] = [];
    const broken: ErrorDetail[] = [];
    for (const reader of readers) {
      try {
        const { read } = translateNested({ name: reader.name, query: reader.query, maxRows: reader.max_rows }, this.sources, (n) =>
          byName.get(n),
        );
        const used = nestedParameters(reader.query, read);
        updates.push({
          id: reader.id,
          parameters: resolveParameters(undefined, used, reader.parameters, (n) => inheritedDeclaration(n, read)),
        });
      } catch (err) {
        if (!(err instanceof SqlError)) throw err;
        broken.push({
          domain: 'endpoints',
          reason: 'breaksReader',
          message: `endpoint ${reader.name} reads "${current.name}" and would fail: ${err.message}`,
          location: reader.name,
        });
      }
    }
    if (broken.length) {
      throw new UnprocessableError(
        `The new query of "${current.name}" would break ${broken.length === 1 ? 'an endpoint that reads' : `${broken.length} endpoints that read`} it: ${broken[0].message}.`,
        broken,
      );
    }
    return updates;
  }

  /**
   * Runs `validate` with the endpoints the definition reads: the parameters it uses are those of
   * its text and of the endpoints it reads (from a translation, which is also the check: 422 with
   * `query:<line>:<column>` when the SQL does not parse, names unknown things, breaks a rule, or
   * reads endpoints in a cycle or too deeply), and their declarations are inherited. Also the
   * warnings of that translation (fields no event has brought yet, which read as NULL).
   */
  private async validated(
    body: unknown,
    current: EndpointRecord | undefined,
    validate: (used: (query: string) => string[], inherited: InheritedDeclaration) => EndpointFields,
  ): Promise<{ fields: EndpointFields; warnings: QueryWarning[] }> {
    await initTranslator();
    const draft = draftOf(body, current);
    const loaded =
      draft.query === undefined
        ? new Map<string, EndpointRecord>()
        : await loadReadable(draft.query, this.sources, (names) => this.repository.findByNames(names), {
            ...(current && { id: current.id }),
            name: draft.name,
          });
    let read: readonly NestedEndpoint[] = [];
    let warnings: readonly SqlWarning[] = [];
    const used = (query: string): string[] =>
      withSqlErrors(() => {
        // Its own name answers with the new definition, so reading itself is a cycle.
        const self: NestedEndpoint = { name: draft.name, query, parameters: [] };
        const nested = translateNested({ name: draft.name, query }, this.sources, (n) => (n === draft.name ? self : loaded.get(n)));
        read = nested.read;
        warnings = nested.translation.warnings;
        return nestedParameters(query, read);
      });
    // validate calls `used` with the final query once its other fields are valid: that translation is the check.
    const fields = validate(used, (n) => inheritedDeclaration(n, read));
    return { fields, warnings: queryWarnings(warnings, 'query') };
  }
}

/** An endpoint as saved, with the warnings of its query (docs/COMPATIBILITY.md, "Unknown fields"). */
export type SavedEndpoint = EndpointRecord & { warnings: QueryWarning[] };

/** The name and query a body will have, as far as they are strings (validation says the rest). */
function draftOf(body: unknown, current: EndpointRecord | undefined): { name: string; query: string | undefined } {
  const b = (typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
  const has = (k: string) => Object.prototype.hasOwnProperty.call(b, k);
  const name = has('name') ? b.name : current?.name;
  const query = has('query') ? b.query : current?.query;
  return { name: typeof name === 'string' ? name : '', query: typeof query === 'string' ? query : undefined };
}

/** 409: other endpoints read this one; they are listed. */
function inUse(what: string, readers: readonly NestedEndpoint[]): ConflictError {
  const names = readers.map((r) => `"${r.name}"`).join(', ');
  return new ConflictError(
    `${what}: ${readers.length === 1 ? 'endpoint' : 'endpoints'} ${names} ${readers.length === 1 ? 'reads' : 'read'} it. Change ${readers.length === 1 ? 'that endpoint' : 'those endpoints'} first.`,
    readers.map((r) => ({ domain: 'endpoints', reason: 'readByEndpoint', message: `read by endpoint ${r.name}`, location: r.name })),
  );
}

/** Runs translator code, turning its SqlError into a 422 that points at the query text. */
function withSqlErrors<T>(work: () => T): T {
  try {
    return work();
  } catch (err) {
    if (!(err instanceof SqlError)) throw err;
    const location = `query:${err.line}:${err.column}`;
    throw new UnprocessableError(`The query cannot be used: ${err.message}.\n${err.snippet}`, [
      { domain: 'sql', reason: reasonOf(err), message: err.message, location },
    ]);
  }
}

function reasonOf(err: SqlError): string {
  // SqlSyntaxError → syntaxError, SqlNameError → nameError, ...
  const name = err.name.replace(/^Sql/, '');
  return name.charAt(0).toLowerCase() + name.slice(1);
}

function notFound(idOrName: string): NotFoundError {
  return new NotFoundError(`No endpoint named or with id "${idOrName}".`, [
    { domain: 'endpoints', reason: 'notFound', message: 'unknown endpoint', location: 'idOrName' },
  ]);
}

function duplicateName(name: string) {
  return (err: Error & { code?: string }): never => {
    if (err.code === '23505') {
      throw new ConflictError(`An endpoint named "${name}" already exists.`, [
        { domain: 'endpoints', reason: 'duplicateName', message: 'name already taken', location: 'name' },
      ]);
    }
    throw err;
  };
}
