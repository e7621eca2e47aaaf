import { SqlError } from '../sql/errors.js';

/**
 * An LQL query that does not parse, or that names what the source does not have. A SqlError, so
 * every route answers it as it answers a translation problem: 400 with line and column
 * (docs/API.md, "Errors"); the column counts from 1 in the LQL text.
 */
export class LqlError extends SqlError {}
