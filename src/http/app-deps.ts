import type { KeyStore } from '../auth/key-store.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../log.js';
import type { Database } from '../storage/database.js';

/** Everything the HTTP layer is built from; the CLI makes these, tests may make their own. */
export interface AppDeps {
  config: Config;
  database: Database;
  keys: KeyStore;
  logger: Logger;
  /** Absolute base of links the service hands out (`next_uri`): PUBLIC_BASE_URL or the bound address. */
  baseUrl: () => string;
}
