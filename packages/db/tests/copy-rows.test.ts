import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '@inferq/test-utils';
import { copyRows, literal, parseBinaryCopy } from '../src/sql/copy-rows.ts';

// Rows read as a binary COPY: bytea as its bytes, text as UTF-8, int4 big-endian,
// NULL as null; values go in as literals, since COPY takes no parameters.

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(() => t?.close());

describe('rows read as a binary COPY', () => {
  it('gives each column its bytes, across many COPY messages, and the pool its connection back', async () => {
    const blob = randomBytes(64 * 1024);
    await t.pool.query('CREATE TABLE copy_probe (n int, label text, data bytea)');
    await t.pool.query(
      `INSERT INTO copy_probe SELECT g, 'row ' || g || ' é', CASE WHEN g % 3 = 0 THEN NULL WHEN g % 3 = 1 THEN $1 ELSE ''::bytea END
                          FROM generate_series(1, 100) g`,
      [blob],
    );
    const rows = await copyRows(t.pool, 'SELECT n, label, data FROM copy_probe ORDER BY n');
    expect(rows).toHaveLength(100);
    rows.forEach(([n, label, data], i) => {
      const g = i + 1;
      expect(n!.readInt32BE(0)).toBe(g);
      expect(label!.toString()).toBe(`row ${g} é`);
      if (g % 3 === 0) expect(data).toBeNull();
      else expect(Buffer.compare(data!, g % 3 === 1 ? blob : Buffer.alloc(0))).toBe(0);
    });
    expect(t.pool.totalCount - t.pool.idleCount).toBe(0);
  });

  it('takes any string as a literal, quotes and backslashes included, and reports a failing query', async () => {
    const odd = `it's a \\ "test"; DROP TABLE jobs; --`;
    const [row] = await copyRows(t.pool, `SELECT ${literal(odd)}::text`);
    expect(row![0]!.toString()).toBe(odd);
    await expect(copyRows(t.pool, 'SELECT no_such_column FROM copy_probe')).rejects.toThrow(/no_such_column/);
    expect(t.pool.totalCount - t.pool.idleCount).toBe(0);
  });

  it('refuses what is not a binary COPY stream', () => {
    expect(() => parseBinaryCopy(Buffer.from('1\tx\n'))).toThrow(/not a binary COPY/);
  });
});
