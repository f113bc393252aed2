import type { Database, Session } from '../storage/database.js';
import { SERVICE_SCHEMA } from '../storage/service-schema.js';
import type { QueryParameter } from './parameters.js';
import type { Query } from './query.js';

/**
 * Users' saved queries in `_service.queries`. Ids come from the sequence `query_ids`, which
 * never hands out a number twice (DuckDB does not roll a sequence back with a transaction).
 * Recently read queries are kept in memory: every execute and latest-result request reads
 * one, and a query changes only through this store.
 */

interface QueryRow {
  query_id: bigint;
  owner: string;
  name: string;
  description: string;
  tags: string;
  parameters: string;
  query_sql: string;
  version: number;
  is_private: boolean;
  is_archived: boolean;
  created_at: Date;
  updated_at: Date;
}

function fromRow(row: QueryRow): Query {
  return {
    id: Number(row.query_id),
    source: 'user',
    owner: row.owner,
    name: row.name,
    description: row.description,
    tags: JSON.parse(row.tags) as string[],
    parameters: JSON.parse(row.parameters) as QueryParameter[],
    sql: row.query_sql,
    version: row.version,
    isPrivate: row.is_private,
    isArchived: row.is_archived,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export type NewQuery = Omit<Query, 'id' | 'source' | 'version' | 'isArchived' | 'createdAt' | 'updatedAt'>;

/** What an update may change. */
export type QueryChanges = Partial<
  Pick<Query, 'name' | 'description' | 'tags' | 'parameters' | 'sql' | 'isPrivate' | 'isArchived'>
>;

/** Memory for cached queries, counted by their text (SQL is most of a query). */
const CACHE_BYTES = 32 * 1024 * 1024;

const sizeOf = (query: Query) => 2 * (query.sql.length + query.description.length + query.name.length) + 1024;

export class QueryStore {
  /** Most recently used last; a Map keeps insertion order. */
  private readonly cache = new Map<number, Query>();
  private cacheBytes = 0;
  /** Counts updates, so that a read that raced one does not cache what it read. */
  private updates = 0;

  constructor(private readonly database: Database) {}

  async create(query: NewQuery): Promise<Query> {
    return this.database.write(async (session) => {
      const [row] = await session.all<{ id: bigint }>(`SELECT nextval('${SERVICE_SCHEMA}.query_ids') AS id`);
      const id = Number(row?.id);
      const at = new Date();
      const now = at.toISOString();
      await session.run(
        `INSERT INTO ${SERVICE_SCHEMA}.queries VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, false, ?, ?)`,
        [
          id,
          query.owner,
          query.name,
          query.description,
          JSON.stringify(query.tags),
          JSON.stringify(query.parameters),
          query.sql,
          query.isPrivate,
          now,
          now,
        ],
      );
      return {
        ...query,
        id,
        source: 'user' as const,
        version: 1,
        isArchived: false,
        createdAt: at,
        updatedAt: at,
      };
    });
  }

  /** The query, from memory or read on `session` (a caller that holds one must pass it). */
  async get(id: number, session?: Session): Promise<Query | undefined> {
    const cached = this.cache.get(id);
    if (cached) {
      this.cache.delete(id); // Re-inserted at the young end.
      this.cache.set(id, cached);
      return cached;
    }
    const read = (s: Session) =>
      s.all<QueryRow>(`SELECT * FROM ${SERVICE_SCHEMA}.queries WHERE query_id = ?`, [id]);
    const updatesBefore = this.updates;
    const [row] = session ? await read(session) : await this.database.read(read);
    if (!row) return undefined;
    const query = fromRow(row);
    if (this.updates === updatesBefore) this.remember(query);
    return query;
  }

  /**
   * Applies `change` to the stored query inside one write, so that concurrent updates each
   * see the other's result and versions never repeat. `change` may throw to refuse.
   */
  async update(
    id: number,
    change: (current: Query) => QueryChanges & { bumpVersion?: boolean },
  ): Promise<Query> {
    const updated = await this.database.write(async (session) => {
      const [row] = await session.all<QueryRow>(
        `SELECT * FROM ${SERVICE_SCHEMA}.queries WHERE query_id = ?`,
        [id],
      );
      if (!row) throw new Error(`query ${id} vanished`);
      const current = fromRow(row);
      const { bumpVersion, ...changes } = change(current);
      const next: Query = {
        ...current,
        ...changes,
        version: current.version + (bumpVersion ? 1 : 0),
        updatedAt: new Date(),
      };
      await session.run(
        `UPDATE ${SERVICE_SCHEMA}.queries SET name = ?, description = ?, tags = ?, parameters = ?, query_sql = ?,
           version = ?, is_private = ?, is_archived = ?, updated_at = ? WHERE query_id = ?`,
        [
          next.name,
          next.description,
          JSON.stringify(next.tags),
          JSON.stringify(next.parameters),
          next.sql,
          next.version,
          next.isPrivate,
          next.isArchived,
          (next.updatedAt as Date).toISOString(),
          id,
        ],
      );
      return next;
    });
    this.updates++;
    this.remember(updated);
    return updated;
  }

  /** The owner's queries, newest first, and how many the owner has. */
  async listOwn(owner: string, limit: number, offset: number): Promise<{ queries: Query[]; total: number }> {
    return this.database.read(async (s) => {
      const rows = await s.all<QueryRow>(
        `SELECT * FROM ${SERVICE_SCHEMA}.queries WHERE owner = ? ORDER BY query_id DESC LIMIT ? OFFSET ?`,
        [owner, limit, offset],
      );
      const [count] = await s.all<{ n: bigint }>(
        `SELECT count(*) AS n FROM ${SERVICE_SCHEMA}.queries WHERE owner = ?`,
        [owner],
      );
      return { queries: rows.map(fromRow), total: Number(count?.n ?? 0) };
    });
  }

  /** How many private queries, not archived, `owner` has (the usage's `private_queries`). */
  async countPrivate(owner: string): Promise<number> {
    const [row] = await this.database.read((s) =>
      s.all<{ n: bigint }>(
        `SELECT count(*) AS n FROM ${SERVICE_SCHEMA}.queries WHERE owner = ? AND is_private AND NOT is_archived`,
        [owner],
      ),
    );
    return Number(row?.n ?? 0);
  }

  private remember(query: Query): void {
    this.forget(query.id);
    this.cache.set(query.id, query);
    this.cacheBytes += sizeOf(query);
    for (const oldest of this.cache.keys()) {
      if (this.cacheBytes <= CACHE_BYTES) break;
      this.forget(oldest);
    }
  }

  private forget(id: number): void {
    const cached = this.cache.get(id);
    if (!cached) return;
    this.cache.delete(id);
    this.cacheBytes -= sizeOf(cached);
  }
}
