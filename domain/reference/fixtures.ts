// Loads a reference-data fixture (addendum section 2): validated whole first, against its
// JSON Schema and against what it refers to, then upserted. A bad file names the broken
// entry and writes nothing. Loading the same file twice leaves the same state.
import { describeErrors, validateFixture, type FixtureFile } from '../../schemas/index.ts';
import type { ReferenceRepository, Coverage } from './repository.ts';
import type { UserRepository } from '../accounts/users.ts';
import { hashPassword, verifyPassword } from '../accounts/passwords.ts';

export class FixtureError extends Error {
  constructor(readonly problems: string[]) {
    super(`fixture rejected, nothing was loaded:\n  - ${problems.join('\n  - ')}`);
    this.name = 'FixtureError';
  }
}

export interface FixtureSummary {
  exchanges: number;
  organizations: number;
  assets: number;
  pairs: number;
  coverage: number;
  wallets: number;
  users: { created: number; updated: number };
}

/** Names an entry the way a person finds it in the file: `pairs[3] (binance ACME/USDT)`. */
function entryName(pathParts: string[], data: unknown): string {
  const [section, index] = pathParts;
  if (section === undefined) return '(file)';
  if (index === undefined) return section;
  const entry = (data as Record<string, unknown[]>)[section]?.[Number(index)] as Record<string, unknown> | undefined;
  const label = entry ? (['slug', 'symbol', 'email', 'organization', 'id'].map((k) => entry[k]).find((v) => v !== undefined) ?? '') : '';
  const pairLabel = entry && section === 'pairs' ? `${String(entry.exchange)} ${String(entry.pair)}` : undefined;
  return `${section}[${index}]${pairLabel ? ` (${pairLabel})` : label !== '' ? ` (${String(label)})` : ''}`;
}

export function checkFixture(
  data: unknown,
  existing: { exchanges: string[]; organizations: { slug: string; kind: string }[]; assets: string[] },
): FixtureFile {
  if (!validateFixture(data)) {
    const problems = (validateFixture.errors ?? []).slice(0, 10).map((e) => {
      const parts = e.instancePath.split('/').slice(1);
      const field = parts.slice(2).join('.');
      return `${entryName(parts, data)}: ${field ? `${field} ` : ''}${e.message ?? 'is invalid'}${
        e.keyword === 'additionalProperties' ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})` : ''
      }`;
    });
    throw new FixtureError(problems.length ? problems : [describeErrors(validateFixture.errors)]);
  }
  const f = data;
  const problems: string[] = [];
  const dupes = <T>(section: string, list: T[] | undefined, key: (t: T) => string) => {
    const seen = new Set<string>();
    (list ?? []).forEach((t, i) => {
      const k = key(t);
      if (seen.has(k)) problems.push(`${section}[${i}] (${k}): appears twice in the file`);
      seen.add(k);
    });
  };
  dupes('exchanges', f.exchanges, (e) => e.slug);
  dupes('organizations', f.organizations, (o) => o.slug);
  dupes('assets', f.assets, (a) => a.symbol);
  dupes('pairs', f.pairs, (p) => `${p.exchange} ${p.pair}`);
  dupes('wallets', f.wallets, (w) => String(w.id));
  dupes('users', f.users, (u) => u.email.toLowerCase());

  const exchanges = new Set([...existing.exchanges, ...(f.exchanges ?? []).map((e) => e.slug)]);
  const orgKinds = new Map(existing.organizations.map((o) => [o.slug, o.kind]));
  for (const o of f.organizations ?? []) orgKinds.set(o.slug, o.kind);
  const assets = new Set([...existing.assets, ...(f.assets ?? []).map((a) => a.symbol)]);
  const filePairs = new Set((f.pairs ?? []).map((p) => p.pair));

  (f.assets ?? []).forEach((a, i) => {
    if (!orgKinds.has(a.owner)) problems.push(`assets[${i}] (${a.symbol}): owner "${a.owner}" is not a known organization`);
  });
  (f.pairs ?? []).forEach((p, i) => {
    const name = `pairs[${i}] (${p.exchange} ${p.pair})`;
    if (!exchanges.has(p.exchange)) problems.push(`${name}: exchange "${p.exchange}" is not a known exchange`);
    if (!assets.has(p.asset)) problems.push(`${name}: asset "${p.asset}" is not a known asset`);
    if ((p.market_type === 'perp') !== p.asset.endsWith('_PERP')) {
      problems.push(`${name}: market_type "${p.market_type}" does not match asset "${p.asset}" (perpetual assets end in _PERP)`);
    }
  });
  (f.coverage ?? []).forEach((c, i) => {
    const name = `coverage[${i}] (${c.organization})`;
    if (!orgKinds.has(c.organization)) problems.push(`${name}: organization "${c.organization}" is not a known organization`);
    for (const a of c.assets) if (!assets.has(a)) problems.push(`${name}: asset "${a}" is not a known asset`);
    for (const e of c.exchanges ?? []) if (!exchanges.has(e)) problems.push(`${name}: exchange "${e}" is not a known exchange`);
    for (const p of c.pairs ?? []) if (!filePairs.has(p)) problems.push(`${name}: pair "${p}" is not a pair of this file`);
  });
  (f.wallets ?? []).forEach((w, i) => {
    const name = `wallets[${i}] (${w.id})`;
    const kind = orgKinds.get(w.organization);
    if (!kind) problems.push(`${name}: organization "${w.organization}" is not a known organization`);
    else if (kind !== 'market_maker') problems.push(`${name}: organization "${w.organization}" is not a market maker`);
    if (!exchanges.has(w.exchange)) problems.push(`${name}: exchange "${w.exchange}" is not a known exchange`);
  });
  (f.users ?? []).forEach((u, i) => {
    for (const o of u.organizations ?? []) {
      if (!orgKinds.has(o)) problems.push(`users[${i}] (${u.email}): organization "${o}" is not a known organization`);
    }
  });
  if (problems.length > 0) throw new FixtureError(problems);
  return f;
}

export async function loadFixture(data: unknown, repos: { reference: ReferenceRepository; users: UserRepository }): Promise<FixtureSummary> {
  const [exchanges, organizations, assets] = await Promise.all([
    repos.reference.exchanges(),
    repos.reference.organizations(),
    repos.reference.assets(),
  ]);
  const f = checkFixture(data, {
    exchanges: exchanges.map((e) => e.slug),
    organizations,
    assets: assets.map((a) => a.symbol),
  });

  // Several coverage entries of one organization and asset merge into one row.
  const coverage = new Map<string, Coverage>();
  for (const c of f.coverage ?? []) {
    for (const asset of c.assets) {
      const key = `${c.organization}\u0000${asset}`;
      const row = coverage.get(key) ?? { organization: c.organization, asset, exchanges: [], pairs: [] };
      row.exchanges = [...new Set([...row.exchanges, ...(c.exchanges ?? [])])];
      row.pairs = [...new Set([...row.pairs, ...(c.pairs ?? [])])];
      coverage.set(key, row);
    }
  }

  await repos.reference.upsert({
    exchanges: (f.exchanges ?? []).map((e) => ({ ...e, icon_url: e.icon_url ?? '' })),
    organizations: (f.organizations ?? []).map((o) => ({ slug: o.slug, name: o.name, kind: o.kind, telegram_chat_id: o.telegram_chat_id === undefined ? '' : String(o.telegram_chat_id) })),
    assets: (f.assets ?? []).map((a) => ({ ...a, labels: a.labels ?? [] })),
    pairs: f.pairs ?? [],
    coverage: [...coverage.values()],
    wallets: f.wallets ?? [],
  });

  let created = 0;
  let updated = 0;
  for (const u of f.users ?? []) {
    const existing = await repos.users.byEmail(u.email);
    // Rehash only when the password changed, so reloading a fixture is cheap and stable.
    const passwordHash =
      existing && (await verifyPassword(existing.password_hash, u.password))
        ? existing.password_hash
        : await hashPassword(u.password);
    const id = existing?.id ?? (await repos.users.nextId());
    await repos.users.save({
      id,
      email: u.email,
      username: u.username,
      password_hash: passwordHash,
      first_name: u.first_name ?? '',
      last_name: u.last_name ?? '',
      is_staff: u.is_staff ?? false,
      is_active: true,
    });
    await repos.users.setMemberships(id, u.organizations ?? []);
    if (existing) updated++;
    else created++;
  }
  return {
    exchanges: f.exchanges?.length ?? 0,
    organizations: f.organizations?.length ?? 0,
    assets: f.assets?.length ?? 0,
    pairs: f.pairs?.length ?? 0,
    coverage: coverage.size,
    wallets: f.wallets?.length ?? 0,
    users: { created, updated },
  };
}
