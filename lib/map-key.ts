// A Map key of a few parts. Written as one template, not as a list joined: the market-maker
// reads build one per row of a month, hundreds of thousands per answer. Keys of one Map
// have the same number of parts, so the parts not given (written empty) never make two
// keys equal.

/** The parts, NUL-separated, as one string. */
export const mapKey = (a: string | number, b: string | number, c: string | number = '', d: string | number = '', e: string | number = '', f: string | number = ''): string =>
  `${a}\u0000${b}\u0000${c}\u0000${d}\u0000${e}\u0000${f}`;
