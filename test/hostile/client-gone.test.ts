import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { bodyToFile, ClientGoneError } from '../../src/tables/body-to-file.js';
import { tempDir } from '../support/service.js';

/**
 * A client that disconnects while the server is still opening the temporary file of its
 * upload: found by the hostile-input test as an uncaught exception, which would end the
 * server process. The upload must fail with ClientGoneError and leave no file behind.
 */

const dir = tempDir('client-gone-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a request body that closes before its temporary file is open', () => {
  it('fails the upload with ClientGoneError instead of an uncaught error', async () => {
    for (const how of ['close', 'error'] as const) {
      const body = new PassThrough();
      // As node's IncomingMessage does: an aborted request emits 'error' only to listeners.
      body.on('error', () => undefined);
      body.write('{"table_name":"x","data":"a\\n1');
      const file = path.join(dir, `upload-${how}.csv`);
      const received = bodyToFile(body, file, 1_000_000);
      // Synchronously after the call: the file is still being opened.
      if (how === 'close') body.destroy();
      else body.destroy(new Error('socket hang up'));
      await expect(received).rejects.toBeInstanceOf(ClientGoneError);
      expect(fs.existsSync(file)).toBe(false);
    }
  });

  it('still fails with ClientGoneError when the body closes mid-stream', async () => {
    const body = new PassThrough();
    const file = path.join(dir, 'upload-mid.csv');
    const received = bodyToFile(body, file, 1_000_000);
    body.write('a'.repeat(10_000));
    await new Promise((r) => setTimeout(r, 20));
    body.destroy();
    await expect(received).rejects.toBeInstanceOf(ClientGoneError);
    expect(fs.existsSync(file)).toBe(false);
  });
});
