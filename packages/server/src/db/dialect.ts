export type Dialect = 'sqlite' | 'postgres' | 'mysql';

export function dialectOf(url: string): Dialect {
  if (url.startsWith('sqlite://')) return 'sqlite';
  if (/^postgres(ql)?:\/\//.test(url)) return 'postgres';
  return 'mysql';
}
