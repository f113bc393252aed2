import fs from 'node:fs';
import path from 'node:path';
import { embeddedManifest, isSingleExecutable, readEmbedded } from './single-executable.js';

/**
 * Files the service ships with (saved queries): read from the source
 * tree when run from it (tsx, tests), from the embedded copies in the single-file build.
 * The rest of the code asks here and never learns which, so both paths serve the same bytes.
 */

/** The folders of the source tree that the single-file build embeds. */
export const PROJECT_FOLDERS = ['queries'] as const;
export type ProjectFolder = (typeof PROJECT_FOLDERS)[number];

export interface ProjectFile {
  /** Path inside the folder, with `/` separators. */
  name: string;
  /** Where it came from, for messages: a path on disk, or `(embedded) queries/x.sql`. */
  origin: string;
  contents: Buffer;
}

/** The project's root in the source tree; only meaningful outside the single-file build. */
export function sourceRoot(): string {
  return path.resolve(import.meta.dirname, '../..');
}

function listFiles(root: string, prefix = ''): string[] {
  const names: string[] = [];
  for (const entry of fs.readdirSync(path.join(root, prefix), { withFileTypes: true })) {
    const name = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) names.push(...listFiles(root, name));
    else if (entry.isFile()) names.push(name);
  }
  return names;
}

/** Every file of a project folder, sorted by name. */
export function projectFiles(folder: ProjectFolder): ProjectFile[] {
  if (isSingleExecutable()) {
    const files = embeddedManifest().projectFiles[folder] ?? {};
    return Object.keys(files)
      .sort()
      .map((name) => ({
        name,
        origin: `(embedded) ${folder}/${name}`,
        contents: readEmbedded(files[name] as NonNullable<(typeof files)[string]>),
      }));
  }
  const root = path.join(sourceRoot(), folder);
  return listFiles(root)
    .sort()
    .map((name) => {
      const file = path.join(root, name);
      return { name, origin: file, contents: fs.readFileSync(file) };
    });
}
