import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UploadBodyDecoder } from '../../src/tables/upload-body-decoder.js';

/** Runs the decoder over `body` cut at `cuts`, returning the decoded data and fields. */
async function decode(body: Buffer, cuts: number[] = []) {
  const points = [...new Set(cuts.map((c) => c % (body.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let last = 0;
  for (const point of [...points, body.length]) {
    if (point > last) chunks.push(body.subarray(last, point));
    last = point;
  }
  const decoder = new UploadBodyDecoder();
  const out: Buffer[] = [];
  await pipeline(
    Readable.from(chunks),
    decoder,
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        out.push(chunk);
        callback();
      },
    }),
  );
  return { data: Buffer.concat(out), result: decoder.result };
}

/** JSON text of a string where each character may be written as a \u escape. */
function encodeString(text: string, escapeMask: boolean[]): string {
  let out = '"';
  let i = 0;
  for (const char of text) {
    const plain = JSON.stringify(char).slice(1, -1);
    if (escapeMask[i++ % escapeMask.length]) {
      for (let k = 0; k < char.length; k++) out += `\\u${char.charCodeAt(k).toString(16).padStart(4, '0')}`;
    } else {
      out += plain;
    }
  }
  return `${out}"`;
}

describe('UploadBodyDecoder', () => {
  it('decodes any string split anywhere exactly as JSON.parse does', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'binary', maxLength: 300 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 7 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.string({ maxLength: 20 }),
        async (data, mask, cuts, description) => {
          const body = Buffer.from(
            `{ "description": ${JSON.stringify(description)}, "data": ${encodeString(data, mask)} , "table_name":"t", "is_private": false }`,
          );
          const { data: decoded, result } = await decode(body, cuts);
          expect(decoded.equals(Buffer.from(data, 'utf8'))).toBe(true);
          expect(result?.fields.get('description')).toBe(description);
          expect(result?.fields.get('table_name')).toBe('t');
          expect(result?.fields.get('is_private')).toBe(false);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('rejects exactly the bodies JSON.parse rejects (one-field mutations)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 40 }),
        fc.nat(),
        fc.integer({ min: 0, max: 127 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (data, at, byte, cuts) => {
          const valid = Buffer.from(JSON.stringify({ table_name: 't', data, n: [1, { x: null }] }));
          const body = Buffer.from(valid);
          body[at % body.length] = byte;
          let parsed: unknown;
          try {
            parsed = JSON.parse(body.toString('utf8'));
          } catch {
            parsed = undefined;
          }
          const parsedDuplicateFree =
            parsed !== undefined && typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
          const outcome = await decode(body, cuts).then(
            () => 'ok',
            () => 'error',
          );
          if (parsed === undefined || !parsedDuplicateFree) expect(outcome).toBe('error');
          else if (
            typeof (parsed as { data?: unknown }).data === 'string' ||
            !('data' in (parsed as object))
          ) {
            // Keys may collide after a mutation (a duplicate is refused, JSON.parse keeps the last).
            const keys = body.toString('utf8').match(/"(?:[^"\\]|\\.)*"\s*:/g) ?? [];
            if (new Set(keys.map((k) => k.replace(/\s*:$/, ''))).size === keys.length)
              expect(outcome).toBe('ok');
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('splits a surrogate pair escape across chunks', async () => {
    const body = Buffer.from('{"data":"a\\ud83d\\ude00b","table_name":"t"}');
    for (let cut = 1; cut < body.length; cut++) {
      const { data } = await decode(body, [cut]);
      expect(data.toString('utf8')).toBe('a😀b');
    }
  });

  it('splits a multi-byte character across chunks', async () => {
    const body = Buffer.from('{"data":"€😀é","table_name":"t"}');
    for (let cut = 1; cut < body.length; cut++) {
      for (let second = cut + 1; second < body.length; second++) {
        const { data } = await decode(body, [cut, second]);
        expect(data.toString('utf8')).toBe('€😀é');
      }
    }
  });

  it('reports a missing data field as hasData false', async () => {
    const { result } = await decode(Buffer.from('{"table_name":"t"}'));
    expect(result?.hasData).toBe(false);
  });
});
