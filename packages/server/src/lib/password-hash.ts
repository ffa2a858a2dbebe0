/** bcryptjs, loaded on first use: an idle server (and every request by API token) needs none of it. */
const bcrypt = async () => (await import('bcryptjs')).default;

export const DEFAULT_BCRYPT_COST = 10;

// The cost is one setting for the whole process (SIGNALBOX_BCRYPT_COST), applied once at start by the app and
// the command line; the test harness and the e2e server lower it so that creating users stays cheap.
let cost = DEFAULT_BCRYPT_COST;
let decoy: Promise<string> | undefined;

export function setPasswordHashCost(next: number) {
  if (next === cost) return;
  cost = next;
  decoy = undefined;
}

export const hashPassword = async (password: string) => (await bcrypt()).hash(password, cost);

export const passwordMatches = async (password: string, hash: string) =>
  (await bcrypt()).compare(password, hash);

/**
 * A hash of the current cost to compare against when the login is unknown, so timing does not reveal which
 * logins exist.
 */
export const decoyHash = () => {
  decoy ??= bcrypt().then((b) => b.hash('signalbox-decoy-password', cost));
  return decoy;
};
