// The two-factor (TOTP) secret of each user and whether it is active. The secret must be
// read back to check codes, so it is stored as is (base32), like the rest of ClickHouse
// behind its access control; disabling clears it.
import type { ClickHouse } from '../../lib/clickhouse.ts';

export interface TotpDevice {
  userId: number;
  secret: string;
  /** False between setup and confirmation: codes are not asked for yet. */
  confirmed: boolean;
}

type Row = { user_id: string | number; secret: string; confirmed: boolean };

export class TotpDeviceRepository {
  constructor(private readonly ch: ClickHouse) {}

  /** The user's device, pending or confirmed; undefined when none or disabled. */
  async get(userId: number): Promise<TotpDevice | undefined> {
    const rows = await this.ch.query<Row>(
      "SELECT user_id, secret, confirmed FROM totp_devices FINAL WHERE user_id = {user:UInt64} AND secret != '' LIMIT 1",
      { user: userId },
    );
    const r = rows[0];
    return r && { userId: Number(r.user_id), secret: r.secret, confirmed: r.confirmed };
  }

  /** The confirmed device only: the one sign-in asks codes for. */
  async active(userId: number): Promise<TotpDevice | undefined> {
    const device = await this.get(userId);
    return device?.confirmed ? device : undefined;
  }

  async save(device: TotpDevice): Promise<void> {
    await this.ch.insert('totp_devices', [{ user_id: device.userId, secret: device.secret, confirmed: device.confirmed, updated_at: Date.now() }]);
  }

  async remove(userId: number): Promise<void> {
    await this.ch.insert('totp_devices', [{ user_id: userId, secret: '', confirmed: false, updated_at: Date.now() }]);
  }
}
