/**
 * Endpoint management (CONTRACT.md §7): validate the definition, translate its SQL so that a
 * definition that cannot run is refused with 422 and the line:column of the problem, then save.
 * Every update bumps `version` (EndpointRepository.update), which invalidates cached results.
 */
import { ConflictError, NotFoundError, UnprocessableError } from '../errors.js';
import type { SourceLookup } from '../sources/schema.js';
import { initTranslator, queryParameters, SqlError, translateQuery } from '../sql/index.js';
import { queryWarnings, type QueryWarning } from './warnings.js';
import { validateDefinition, validatePatch } from './definition.js';
import { EndpointRepository, type EndpointFields, type EndpointRecord } from './repository.js';
import type { Knex } from 'knex';

export class EndpointManagementService {
  readonly repository: EndpointRepository;

  constructor(knex: Knex, private readonly sources: SourceLookup) {
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

  async create(body: unknown): Promise<SavedEndpoint> {
    const fields = validateDefinition(body, usedParameters);
    const warnings = await this.checkTranslates(fields);
    const row = await this.repository.insert(fields).catch(duplicateName(fields.name));
    return { ...row, warnings };
  }

  /** PUT: the whole definition; omitted fields take their defaults. */
  async replace(idOrName: string, body: unknown): Promise<SavedEndpoint> {
    const current = await this.get(idOrName);
    const fields = validateDefinition(body, usedParameters);
    return this.save(current, fields);
  }

  /** PATCH: only the fields sent change. */
  async patch(idOrName: string, body: unknown): Promise<SavedEndpoint> {
    const current = await this.get(idOrName);
    const fields = validatePatch(current, body, usedParameters);
    return this.save(current, fields);
  }

  async delete(idOrName: string): Promise<void> {
    const current = await this.get(idOrName);
    if (!(await this.repository.delete(current.id))) throw notFound(idOrName);
  }

  private async save(current: EndpointRecord, fields: EndpointFields): Promise<SavedEndpoint> {
    const warnings = await this.checkTranslates(fields);
    const row = await this.repository.update(current.id, fields).catch(duplicateName(fields.name));
    if (!row) throw notFound(current.id); // deleted meanwhile
    return { ...row, warnings };
  }

  /**
   * 422 with `query:<line>:<column>` when the SQL does not parse, names unknown things or breaks
   * a rule; otherwise its warnings (fields no event has brought yet, which read as NULL).
   */
  private async checkTranslates(fields: EndpointFields): Promise<QueryWarning[]> {
    await initTranslator();
    const translation = withSqlErrors(() => translateQuery({ query: fields.query, sources: this.sources, maxRows: fields.max_rows }));
    return queryWarnings(translation.warnings, 'query');
  }
}

/** An endpoint as saved, with the warnings of its query (docs/COMPATIBILITY.md, "Unknown fields"). */
export type SavedEndpoint = EndpointRecord & { warnings: QueryWarning[] };


function usedParameters(query: string): string[] {
  return withSqlErrors(() => queryParameters(query));
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
  return (err: { code?: string }): never => {
    if (err.code === '23505') {
      throw new ConflictError(`An endpoint named "${name}" already exists.`, [
        { domain: 'endpoints', reason: 'duplicateName', message: 'name already taken', location: 'name' },
      ]);
    }
    throw err;
  };
}
