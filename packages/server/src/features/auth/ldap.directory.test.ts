import { Filter } from 'ldapts';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config';
import { isFilterTemplate, ldapUrl, parseLdapServer } from '../../lib/ldap-address';
import {
  escapeFilterValue,
  firstRdnValue,
  groupFilter,
  groupKeys,
  mappedValue,
  mappingAttributes,
  normalizeGroup,
  userFilter,
} from './ldap.directory';

/** The pure parts of LDAP sign-in: filter escaping, field mappings, group names, addresses and settings. */

describe('search filters', () => {
  it('escapes what RFC 4515 says, as ldapts does', () => {
    expect(escapeFilterValue('a*b(c)d\\e\0f')).toBe('a\\2ab\\28c\\29d\\5ce\\00f');
    for (const value of ['*', 'admin)(|(uid=*', 'x\\', '\0', 'Zoë (ops)', 'plain', ''])
      expect(escapeFilterValue(value), value).toBe(Filter.escape(value));
  });

  it('puts the escaped login at every %s (or %[1]s) of the template', () => {
    expect(userFilter('(uid=%s)', 'alice')).toBe('(uid=alice)');
    expect(userFilter('(|(uid=%[1]s)(mail=%[1]s))', 'al*')).toBe('(|(uid=al\\2a)(mail=al\\2a))');
    expect(userFilter('(&(objectClass=person)(uid=%s))', 'admin)(|(uid=*')).toBe(
      '(&(objectClass=person)(uid=admin\\29\\28|\\28uid=\\2a))',
    );
    // A `$&`-style pattern in the login is text, not a replacement pattern.
    expect(userFilter('(uid=%s)', '$&$1')).toBe('(uid=$&$1)');
  });

  it('puts the escaped DN at %s and the login at %u of the group filter', () => {
    expect(groupFilter('(|(member=%s)(memberUid=%u))', 'uid=a(1),dc=x', 'a*')).toBe(
      '(|(member=uid=a\\281\\29,dc=x)(memberUid=a\\2a))',
    );
  });

  it('tells one parenthesised filter from anything else', () => {
    expect(isFilterTemplate('(uid=%s)')).toBe(true);
    expect(isFilterTemplate('(&(objectClass=inetOrgPerson)(uid=%s))')).toBe(true);
    expect(isFilterTemplate(' (cn=a\\29b) ')).toBe(true);
    for (const bad of ['uid=%s', '(uid=%s', '(uid=%s))', '(a=1)(b=2)', ')(', ''])
      expect(isFilterTemplate(bad), bad).toBe(false);
  });
});

describe('field mappings', () => {
  const entry = {
    dn: 'uid=alice,ou=people,dc=example,dc=org',
    uid: 'alice',
    CN: ['Alice L', 'Alice'],
    mail: [],
  };

  it('reads an attribute case-insensitively, the DN for dn, and fills templates', () => {
    expect(mappedValue(entry, 'uid')).toBe('alice');
    expect(mappedValue(entry, 'cn')).toBe('Alice L');
    expect(mappedValue(entry, 'mail')).toBe('');
    expect(mappedValue(entry, 'dn')).toBe(entry.dn);
    expect(mappedValue(entry, '')).toBe(entry.dn);
    expect(mappedValue(entry, '{{ .uid }}@corp.example')).toBe('alice@corp.example');
    expect(mappedValue(entry, '{{.uid}}.{{ .missing }}')).toBe('alice.');
  });

  it('asks the directory for the attributes a mapping reads', () => {
    expect(mappingAttributes('mail')).toEqual(['mail']);
    expect(mappingAttributes('dn')).toEqual([]);
    expect(mappingAttributes('{{ .givenName }} {{ .sn }}')).toEqual(['givenName', 'sn']);
  });
});

describe('group names', () => {
  it('reads the first RDN value of a DN, escapes undone', () => {
    expect(firstRdnValue('cn=admins,ou=groups,dc=example,dc=org')).toBe('admins');
    expect(firstRdnValue('CN=Ops\\, EU,OU=Groups')).toBe('Ops, EU');
    expect(firstRdnValue('cn=a\\2Bb+ou=x,dc=y')).toBe('a+b');
    expect(firstRdnValue('plain-name')).toBe('');
  });

  it('knows a group by its DN and its name, compared without case and separator spaces', () => {
    expect(groupKeys('CN=Admins, OU=Groups,DC=Example,DC=Org')).toEqual([
      'cn=admins,ou=groups,dc=example,dc=org',
      'admins',
    ]);
    expect(groupKeys('devs')).toEqual(['devs']);
    expect(normalizeGroup(' CN = Ops , OU=Groups ')).toBe('cn=ops,ou=groups');
  });
});

describe('directory address', () => {
  it('takes the peer host:port form and URLs, with default ports', () => {
    expect(parseLdapServer('ldap.example.org', { needTls: false })).toEqual({
      secure: false,
      host: 'ldap.example.org',
      port: 389,
    });
    expect(parseLdapServer('ldap.example.org', { needTls: true })).toMatchObject({ secure: true, port: 636 });
    expect(parseLdapServer('ldap.example.org:1389', { needTls: false, port: 7 })).toMatchObject({
      port: 1389,
    });
    expect(parseLdapServer('dc01', { needTls: false, port: 3268 })).toMatchObject({ port: 3268 });
    expect(parseLdapServer('ldaps://[::1]:1636/', { needTls: false })).toEqual({
      secure: true,
      host: '::1',
      port: 1636,
    });
    expect(ldapUrl({ secure: true, host: '::1', port: 1636 })).toBe('ldaps://[::1]:1636');
    for (const bad of ['http://x', 'ldap://', 'a b', 'host:99999', 'ldap://u:p@host', 'host/dc=x', '-x'])
      expect(typeof parseLdapServer(bad, { needTls: false }), bad).toBe('string');
    expect(parseLdapServer('ldap://host', { needTls: true })).toMatch(/ldaps:\/\//);
  });
});

describe('LDAP settings', () => {
  const base = { SIGNALBOX_DATA_DIR: '/tmp/signalbox-ldap-settings' };

  it('reads the peer names (config file and container image) and lets SIGNALBOX_* win', () => {
    const image = loadConfig({
      ...base,
      SEMAPHORE_LDAP_ACTIVATED: 'yes',
      SEMAPHORE_LDAP_HOST: 'dc01.example.org',
      SEMAPHORE_LDAP_PORT: '636',
      SEMAPHORE_LDAP_NEEDTLS: 'yes',
      SEMAPHORE_LDAP_DN_BIND: 'uid=bind,dc=example,dc=org',
      SEMAPHORE_LDAP_PASSWORD: 'pw',
      SEMAPHORE_LDAP_DN_SEARCH: 'dc=example,dc=org',
      SEMAPHORE_LDAP_SEARCH_FILTER: '(&(uid=%s)(objectClass=inetOrgPerson))',
      SEMAPHORE_LDAP_MAPPING_MAIL: '{{ .uid }}@example.org',
    });
    expect(image).toMatchObject({
      ldapEnable: true,
      ldapServer: 'dc01.example.org',
      ldapPort: 636,
      ldapNeedTls: true,
      ldapBindDn: 'uid=bind,dc=example,dc=org',
      ldapBindPassword: 'pw',
      ldapSearchDn: 'dc=example,dc=org',
      ldapMappingMail: '{{ .uid }}@example.org',
      ldapMappingUid: 'uid',
      ldapTlsSkipVerify: false,
    });
    const file = loadConfig({
      ...base,
      SEMAPHORE_LDAP_ENABLE: 'true',
      SEMAPHORE_LDAP_SERVER: 'localhost:389',
      SEMAPHORE_LDAP_BIND_DN: 'cn=a',
      SIGNALBOX_LDAP_BIND_DN: 'cn=b',
      SEMAPHORE_LDAP_SEARCH_DN: 'dc=x',
    });
    expect(file).toMatchObject({ ldapEnable: true, ldapServer: 'localhost:389', ldapBindDn: 'cn=b' });
  });

  it('parses the group mappings', () => {
    const config = loadConfig({
      ...base,
      SIGNALBOX_LDAP_ADMIN_GROUPS: '["admins", "cn=root,ou=groups,dc=x"]',
      SIGNALBOX_LDAP_PROJECT_ROLES: '[{"group": "ops", "project_id": 3, "role": "manager"}]',
    });
    expect(config.ldapAdminGroups).toEqual(['admins', 'cn=root,ou=groups,dc=x']);
    expect(config.ldapProjectRoles).toEqual([{ group: 'ops', project_id: 3, role: 'manager' }]);
  });

  it('refuses settings that cannot work, naming the variable', () => {
    const on = { ...base, SIGNALBOX_LDAP_ENABLE: 'true', SIGNALBOX_LDAP_SEARCH_DN: 'dc=x' };
    const refused = (env: Record<string, string>, message: RegExp) =>
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(message);
    refused({ ...base, SIGNALBOX_LDAP_ENABLE: 'true' }, /SIGNALBOX_LDAP_SERVER: must be set/);
    refused(
      { ...base, SIGNALBOX_LDAP_ENABLE: 'true', SIGNALBOX_LDAP_SERVER: 'h' },
      /SIGNALBOX_LDAP_SEARCH_DN/,
    );
    refused({ ...on, SIGNALBOX_LDAP_SERVER: 'ldaps://h', SIGNALBOX_LDAP_STARTTLS: 'true' }, /STARTTLS/);
    refused({ ...on, SIGNALBOX_LDAP_SERVER: 'ldap://h', SIGNALBOX_LDAP_NEEDTLS: 'true' }, /ldaps:\/\//);
    refused({ ...base, SIGNALBOX_LDAP_SERVER: 'http://h' }, /SIGNALBOX_LDAP_SERVER: must be host/);
    refused({ ...base, SIGNALBOX_LDAP_SEARCH_FILTER: 'uid=%s' }, /SIGNALBOX_LDAP_SEARCH_FILTER: must be one/);
    refused({ ...base, SIGNALBOX_LDAP_SEARCH_FILTER: '(uid=alice)' }, /must contain %s/);
    refused({ ...base, SEMAPHORE_LDAP_SEARCH_FILTER: '(uid=alice)' }, /^SEMAPHORE_LDAP_SEARCH_FILTER/);
    refused({ ...base, SIGNALBOX_LDAP_GROUP_SEARCH_FILTER: '(member=x)' }, /must contain %s/);
    refused(
      { ...base, SIGNALBOX_LDAP_ADMIN_GROUPS: 'admins' },
      /SIGNALBOX_LDAP_ADMIN_GROUPS: must be valid JSON/,
    );
    refused(
      { ...base, SIGNALBOX_LDAP_PROJECT_ROLES: '[{"group":"g","project_id":1,"role":"boss"}]' },
      /role/,
    );
    expect(() => loadConfig({ ...on, SIGNALBOX_LDAP_SERVER: 'h' })).not.toThrow(ConfigError);
    // Off, the other settings need not be complete.
    expect(
      loadConfig({ ...base, SIGNALBOX_LDAP_SERVER: 'ldaps://h', SIGNALBOX_LDAP_STARTTLS: 'true' }).ldapEnable,
    ).toBe(false);
  });
});
