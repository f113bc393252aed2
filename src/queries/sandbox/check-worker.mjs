// The sandbox's check worker from the source tree: its TypeScript through tsx, as `npm start`
// runs the rest (the single-file build runs a bundle of check-worker.ts instead).
import { tsImport } from 'tsx/esm/api';

await tsImport('./check-worker.ts', import.meta.url);
