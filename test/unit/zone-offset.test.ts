// The web app's time-zone offset (web/src/ui/format.ts), by which line charts draw their
// time axis in the view's zone: held to luxon's, across daylight saving changes.
import { expect } from 'chai';
import { DateTime } from 'luxon';
import { zoneOffsetMs } from '../../web/src/ui/format.ts';

describe("a zone's offset for the web app's charts (zoneOffsetMs)", () => {
  it("equals luxon's at every hour around the daylight saving changes, and for zones off the hour", () => {
    const zones = ['UTC', 'America/New_York', 'Europe/London', 'Asia/Tokyo', 'Asia/Kolkata', 'Australia/Adelaide', 'America/St_Johns'];
    const starts = [Date.UTC(2026, 2, 7), Date.UTC(2026, 9, 24), Date.UTC(2026, 2, 28)];
    for (const zone of zones) {
      for (const start of starts) {
        for (let t = start; t < start + 4 * 86_400_000; t += 1_800_000 + 1_234) {
          const want = DateTime.fromMillis(t, { zone }).offset * 60_000;
          expect(zoneOffsetMs(zone, t), `${zone} at ${new Date(t).toISOString()}`).to.equal(want);
        }
      }
    }
  });
});
