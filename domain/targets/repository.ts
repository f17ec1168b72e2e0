// Targets and their evaluated state (schemas/clickhouse/030_targets.sql). A batch's rows
// go in one insert, which is all or nothing; reads take each target's newest version.
import { shownCurrentPrice } from './scaling.ts';
import crypto from 'node:crypto';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { Direction, ScalingMode, ScalingSource, TargetSession, TargetStatus, TargetType } from './facts.ts';

/** A target's definition, as a batch writes it. */
export interface TargetDefinition {
  type: TargetType;
  organization: string;
  asset: string;
  exchange: string;
  pair: string;
  metric: string;
  threshold: number;
  direction: Direction;
  active: boolean;
  telegram_notifications: boolean;
  scaling_mode: ScalingMode;
  scaling_enabled: boolean;
  scaling_source: ScalingSource;
  scaling_reference_price: number;
  market_hours: TargetSession | null;
}

export interface TargetState {
  status: TargetStatus;
  /** Met evaluations in a row while recovering (domain/targets/status.ts). */
  met_streak: number;
  updates: { status: TargetStatus; updated_at: number }[];
  effective_threshold: number;
  current_price: number | null;
  scaling_factor: number;
}

export interface Target extends TargetDefinition, TargetState {
  id: number;
  created_at: number;
}

/** A target's row as read: the definition's columns, market_hours '' for all hours, and its state's. */
interface Row extends Omit<TargetDefinition, 'market_hours'> {
  id: string | number;
  market_hours: string;
  created_at: number;
  status: TargetStatus | '';
  met_streak: number;
  updates: [string, number][];
  effective_threshold: number | null;
  current_price: number | null;
  scaling_factor: number | null;
  has_state: number;
}

/** A target's definition alone (what a batch writes), without its id and state. */
export function definitionOf(t: TargetDefinition): TargetDefinition {
  return {
    type: t.type,
    organization: t.organization,
    asset: t.asset,
    exchange: t.exchange,
    pair: t.pair,
    metric: t.metric,
    threshold: t.threshold,
    direction: t.direction,
    active: t.active,
    telegram_notifications: t.telegram_notifications,
    scaling_mode: t.scaling_mode,
    scaling_enabled: t.scaling_enabled,
    scaling_source: t.scaling_source,
    scaling_reference_price: t.scaling_reference_price,
    market_hours: t.market_hours,
  };
}

/** Before its first evaluation: unchecked since it was made, its threshold as it is. */
export function initialState(d: TargetDefinition, createdAt: number): TargetState {
  return {
    status: 'unchecked',
    met_streak: 0,
    updates: [{ status: 'unchecked', updated_at: createdAt }],
    effective_threshold: d.threshold,
    current_price: shownCurrentPrice(d, null),
    scaling_factor: 1,
  };
}

/** The batch_id prefix of the targets an RFQ award creates. */
export const AWARD_PREFIX = 'award:';

export class TargetRepository {
  constructor(private readonly ch: ClickHouse) {}

  /**
   * Every live target (no tombstones), with its state, by id; `only` narrows them to a type,
   * organizations and assets (a loan's KPI reads its market maker's targets on its asset).
   */
  async all(only: { type?: TargetType; organizations?: readonly string[]; assets?: readonly string[] } = {}): Promise<Target[]> {
    const params: Record<string, unknown> = {};
    const narrow: string[] = [];
    if (only.type !== undefined) {
      params.type = only.type;
      narrow.push('type = {type:String}');
    }
    if (only.organizations !== undefined) {
      params.organizations = only.organizations;
      narrow.push('organization IN {organizations:Array(String)}');
    }
    if (only.assets !== undefined) {
      params.assets = only.assets;
      narrow.push('asset IN {assets:Array(String)}');
    }
    const where = narrow.map((c) => ` AND ${c}`).join('');
    const rows = await this.ch.query<Row>(
      `SELECT t.id AS id, t.type AS type, t.organization AS organization, t.asset AS asset, t.exchange AS exchange, t.pair AS pair,
         t.metric AS metric, t.threshold AS threshold, t.direction AS direction, t.active AS active,
         t.telegram_notifications AS telegram_notifications, t.scaling_mode AS scaling_mode, t.scaling_enabled AS scaling_enabled,
         t.scaling_source AS scaling_source, t.scaling_reference_price AS scaling_reference_price, t.market_hours AS market_hours,
         toUnixTimestamp64Milli(t.created_at) AS created_at,
         toString(s.status) AS status, s.met_streak AS met_streak, arrayMap(u -> (u.1, toUnixTimestamp64Milli(u.2)), s.updates) AS updates,
         s.effective_threshold AS effective_threshold, s.current_price AS current_price, s.scaling_factor AS scaling_factor,
         s.id != 0 AS has_state
       FROM (SELECT * FROM targets FINAL WHERE NOT deleted${where}
               -- An RFQ award's targets count once the award is committed (040_agreements.sql).
               AND (NOT startsWith(batch_id, '${AWARD_PREFIX}') OR substring(batch_id, ${AWARD_PREFIX.length + 1}) IN (SELECT commit FROM agreements WHERE commit != ''))) AS t
       LEFT JOIN (SELECT * FROM target_states FINAL${where ? ` WHERE id IN (SELECT id FROM targets WHERE 1${where})` : ''}) AS s ON s.id = t.id
       ORDER BY t.id`,
      params,
      { join_use_nulls: 0 },
    );
    return rows.map((r) => {
      const def: TargetDefinition = {
        type: r.type,
        organization: r.organization,
        asset: r.asset,
        exchange: r.exchange,
        pair: r.pair,
        metric: r.metric,
        threshold: r.threshold,
        direction: r.direction,
        active: Boolean(r.active),
        telegram_notifications: Boolean(r.telegram_notifications),
        scaling_mode: r.scaling_mode,
        scaling_enabled: Boolean(r.scaling_enabled),
        scaling_source: r.scaling_source,
        scaling_reference_price: r.scaling_reference_price,
        market_hours: r.market_hours === '' ? null : (r.market_hours as TargetSession),
      };
      const createdAt = Number(r.created_at);
      const state: TargetState = Number(r.has_state)
        ? {
            status: r.status as TargetStatus,
            met_streak: Number(r.met_streak),
            updates: r.updates.map(([status, at]) => ({ status: status as TargetStatus, updated_at: Number(at) })),
            effective_threshold: r.effective_threshold ?? def.threshold,
            current_price: shownCurrentPrice(def, r.current_price),
            scaling_factor: r.scaling_factor ?? 1,
          }
        : initialState(def, createdAt);
      return { id: Number(r.id), created_at: createdAt, ...def, ...state };
    });
  }

  /** The largest id ever written (tombstones included), for the id allocator's floor. */
  async maxId(): Promise<number> {
    const rows = await this.ch.query<{ id: string | number }>('SELECT max(id) AS id FROM targets');
    return Number(rows[0]?.id ?? 0);
  }

  /**
   * Applies a batch: tombstones of `deleteIds` and the new targets, in one insert (all or
   * nothing). An RFQ award passes its commit: its targets count only once the award's
   * records carry the same commit.
   */
  async applyBatch(batch: { deleteIds: number[]; create: (TargetDefinition & { id: number })[]; by: number; at: number; awardCommit?: string }): Promise<string> {
    const batchId = batch.awardCommit !== undefined ? AWARD_PREFIX + batch.awardCommit : crypto.randomUUID();
    const version = batch.at * 1000 + crypto.randomInt(1000);
    const base = { created_at: batch.at, created_by: batch.by, batch_id: batchId, version };
    const tombstone = {
      type: 'gb',
      organization: '',
      asset: '',
      exchange: '',
      pair: '',
      metric: '',
      threshold: 0,
      direction: 'above',
      active: false,
      telegram_notifications: false,
      scaling_mode: 'legacy',
      scaling_enabled: false,
      scaling_source: 'manual',
      scaling_reference_price: 0,
      market_hours: '',
    };
    const rows = [
      ...batch.deleteIds.map((id) => ({ ...tombstone, id, ...base, deleted: true })),
      ...batch.create.map((t) => ({ ...t, market_hours: t.market_hours ?? '', ...base, deleted: false })),
    ];
    if (rows.length > 0) await this.ch.insert('targets', rows, { dedupToken: batchId });
    // No state row yet: a target without one reads as initialState (unchecked since made).
    return batchId;
  }
}
