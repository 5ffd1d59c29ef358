import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { RedisClient } from '../src/index.ts';
import { luaScript, readLuaSource } from '../src/lua-script.ts';

// Our Lua scripts are files in src/lua, each with a header that documents its
// KEYS and ARGV, named with its number of keys; the header and the code (and
// the callers, at run time) must agree.

const SRC = new URL('../src/', import.meta.url);
const LUA = new URL('lua/', SRC);
const scripts = readdirSync(LUA).filter((f) => f.endsWith('.lua'));
const includes = readdirSync(new URL('includes/', LUA)).map((f) => `includes/${f}`);

/** The code without its comments: what Redis runs. */
const code = (lua: string) => lua.replace(/--\[\[[\s\S]*?\]\]/g, '').replace(/--.*$/gm, '');
/** The literal indices `name[n]` the code uses (loops use ARGV[i]; those are the header's `ARGV[n...]` line). */
const used = (lua: string, name: 'KEYS' | 'ARGV') => [...new Set([...code(lua).matchAll(new RegExp(`${name}\\[(\\d+)\\]`, 'g'))].map((m) => Number(m[1])))];
/** The header's `KEYS[n]` / `ARGV[n]` lines; `ARGV[n...]` documents n and after. */
const documented = (header: string, name: 'KEYS' | 'ARGV') =>
  [...header.matchAll(new RegExp(`^\\s*${name}\\[(\\d+)(\\.\\.\\.)?\\]`, 'gm'))].map((m) => ({ index: Number(m[1]), andAfter: m[2] !== undefined }));
const isDocumented = (header: string, name: 'KEYS' | 'ARGV', index: number) =>
  documented(header, name).some((d) => d.index === index || (d.andAfter && d.index <= index));
const headerOf = (lua: string) => /^--\[\[([\s\S]*?)\]\]/.exec(lua)?.[1] ?? '';

describe('the Lua scripts in src/lua', () => {
  it('are there: one per script the package runs', () => {
    expect(scripts.sort()).toEqual(['fair-priority-assign-2.lua', 'fair-priority-promote-8.lua', 'queue-group-taken-3.lua', 'request-counter-add-1.lua']);
  });

  it.each(scripts)('%s: its header documents every KEYS and ARGV the code uses, and its keys are the ones its name counts', (file) => {
    const source = readLuaSource(new URL(file, LUA));
    expect(source.numberOfKeys).toBe(Number(/-(\d+)\.lua$/.exec(file)![1]));
    expect(used(source.lua, 'KEYS').sort()).toEqual(Array.from({ length: source.numberOfKeys }, (_, i) => i + 1));
    for (const i of used(source.lua, 'ARGV')) expect(isDocumented(source.header, 'ARGV', i), `${file}: ARGV[${i}] undocumented`).toBe(true);
    expect(source.header).toMatch(/^\s*Output:\n\s+\S/m);
    expect(source.lua).not.toContain('--- @include');
  });

  it.each(includes)('%s: its header documents every KEYS and ARGV it reads from the script that includes it', (file) => {
    const lua = readFileSync(new URL(file, LUA), 'utf8');
    const header = headerOf(lua);
    for (const name of ['KEYS', 'ARGV'] as const)
      for (const i of used(lua, name)) expect(isDocumented(header, name, i), `${file}: ${name}[${i}] undocumented`).toBe(true);
    for (const script of scripts.filter((s) => readFileSync(new URL(s, LUA), 'utf8').includes(`--- @include "${file.replace(/\.lua$/, '')}"`))) {
      // Each script that includes it documents the same KEYS and ARGV at those indices.
      const { header: scriptHeader } = readLuaSource(new URL(script, LUA));
      for (const name of ['KEYS', 'ARGV'] as const)
        for (const i of used(lua, name)) expect(isDocumented(scriptHeader, name, i), `${script}: ${name}[${i}] (read by ${file}) undocumented`).toBe(true);
    }
  });

  it('are each loaded by a module of the package', () => {
    // Modules in every room, each naming its script by file (luaScript finds it in src/lua).
    const modules = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => readFileSync(new URL(f, SRC), 'utf8'))
      .join('\n');
    for (const file of scripts) expect(modules, file).toMatch(new RegExp(`luaScript\\('\\w+', '${file.replace(/\./g, '\\.')}'\\)`));
  });
});

describe('luaScript and readLuaSource', () => {
  it('refuse a call with another number of keys than the header documents', async () => {
    const add = luaScript('inferqTestAdd', 'request-counter-add-1.lua');
    await expect(add({} as RedisClient, ['a', 'b'], [1, 1000])).rejects.toThrow('request-counter-add-1.lua takes 1 keys');
  });

  it('refuse a file whose name counts other keys than its header, or without a header', () => {
    const dir = mkdtempSync(join(tmpdir(), 'inferq-lua-'));
    try {
      const write = (name: string, text: string) => {
        writeFileSync(join(dir, name), text);
        return pathToFileURL(join(dir, name));
      };
      const header = '--[[\n  Input:\n    KEYS[1] a\n    KEYS[2] b\n  Output:\n    nothing\n]]\nreturn 0\n';
      expect(readLuaSource(write('good-2.lua', header)).numberOfKeys).toBe(2);
      expect(() => readLuaSource(write('bad-3.lua', header))).toThrow('bad-3.lua: its header documents 2 KEYS; name it <name>-2.lua');
      expect(() => readLuaSource(write('none-0.lua', 'return 0\n'))).toThrow('no --[[ … ]] header');
      expect(() => readLuaSource(write('gap-2.lua', header.replace('KEYS[2]', 'KEYS[3]')))).toThrow('not KEYS[1] … KEYS[n] in order');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
