/** When a delay node ends: after `seconds`, or at the next `time_of_day` (HH:MM) in `timezone`. */
export function delayEnd(
  node: { seconds: number | null; time_of_day: string | null; timezone: string },
  from: Date,
): Date {
  if (node.seconds !== null || node.time_of_day === null)
    return new Date(from.getTime() + (node.seconds ?? 0) * 1000);
  const [hours, minutes] = node.time_of_day.split(':').map(Number) as [number, number];
  for (let day = 0; day <= 2; day++) {
    const local = localParts(from, node.timezone);
    const wanted = Date.UTC(local.year, local.month - 1, local.day + day, hours, minutes);
    // The instant whose local time in the zone is `wanted`: shift by the zone's offset at that instant (twice, for a
    // change of offset in between).
    let instant = wanted - offsetAt(new Date(wanted), node.timezone);
    instant = wanted - offsetAt(new Date(instant), node.timezone);
    if (instant > from.getTime()) return new Date(instant);
  }
  return new Date(from.getTime() + 24 * 3600 * 1000);
}

function localParts(at: Date, timeZone: string) {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
    hourCycle: 'h23',
  }).formatToParts(at);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return {
    year: get('year'),
    month: get('month'),
    day: get('day'),
    hour: get('hour'),
    minute: get('minute'),
    second: get('second'),
  };
}

/** The zone's offset from UTC at an instant, in milliseconds. */
function offsetAt(at: Date, timeZone: string): number {
  const p = localParts(at, timeZone);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return asUtc - Math.floor(at.getTime() / 1000) * 1000;
}
