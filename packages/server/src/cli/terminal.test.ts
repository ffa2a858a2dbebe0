import { describe, expect, it } from 'vitest';
import { checkToken, isCleartextRemote, normalizeUrl } from './credentials';
import { table, terminalSafe } from './terminal';

describe('log lines on a terminal', () => {
  it('keeps colours and drops every other escape sequence and control character', () => {
    expect(terminalSafe('\u001b[1;31mred\u001b[0m plain')).toBe('\u001b[1;31mred\u001b[0m plain');
    // A window title, the clipboard (OSC 52), a cursor move, a screen clear, a bell and a carriage return.
    expect(terminalSafe('a\u001b]0;title\u0007b\u001b]52;c;ZXZpbA==\u001b\\c')).toBe('abc');
    expect(terminalSafe('x\u001b[2J\u001b[Hy\u0007z\rw')).toBe('xyzw');
    expect(terminalSafe('tab\tkept ünïcödé')).toBe('tab\tkept ünïcödé');
    expect(terminalSafe('\u009b31m C1 control')).toBe('31m C1 control');
  });

  it('aligns table columns to their widest cell, names made safe', () => {
    expect(
      table(
        ['ID', 'NAME'],
        [
          ['1', 'Demo'],
          ['12', 'x\u001b]0;t\u0007y'],
        ],
      ),
    ).toEqual(['ID  NAME', '1   Demo', '12  xy']);
  });
});

describe('server URL and token', () => {
  it('keeps a URL without its trailing slash and refuses what is no server URL', () => {
    expect(normalizeUrl('https://sb.example.com/')).toBe('https://sb.example.com');
    expect(normalizeUrl(' http://127.0.0.1:3000/signalbox// ')).toBe('http://127.0.0.1:3000/signalbox');
    expect(() => normalizeUrl('sb.example.com')).toThrow('is not a URL');
    expect(() => normalizeUrl('ftp://sb.example.com')).toThrow('must start with https:// or http://');
    expect(() => normalizeUrl('https://u:p@sb.example.com')).toThrow('user name or password');
    expect(() => normalizeUrl('https://sb.example.com/?x=1')).toThrow('query or a fragment');
  });

  it('says when a token would cross the network in the clear', () => {
    expect(isCleartextRemote('http://sb.example.com')).toBe(true);
    expect(isCleartextRemote('http://127.0.0.1:3000')).toBe(false);
    expect(isCleartextRemote('http://localhost:3000')).toBe(false);
    expect(isCleartextRemote('https://sb.example.com')).toBe(false);
  });

  it('takes a token as one printable line and never repeats it in an error', () => {
    expect(checkToken('  abc_DEF-123\n')).toBe('abc_DEF-123');
    expect(() => checkToken('   ')).toThrow('the API token is empty');
    for (const bad of ['two words', 'line\nbreak', 'x'.repeat(513)]) {
      expect(() => checkToken(bad)).toThrow('that is not an API token');
    }
  });
});
