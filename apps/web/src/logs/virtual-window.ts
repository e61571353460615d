/**
 * Which rows of a fixed-row-height list to render for a scroll position: only those in view plus
 * a few either side, so 50,000 lines cost as much to draw as 50.
 */
export interface RowWindow {
  start: number;
  /** One past the last row to render. */
  end: number;
  /** Where the first rendered row sits, in pixels from the top of the list. */
  offset: number;
  /** Height of the whole list, in pixels. */
  total: number;
}

export function rowWindow(input: {
  scrollTop: number;
  viewportHeight: number;
  rowHeight: number;
  count: number;
  overscan?: number;
}): RowWindow {
  const { rowHeight, count } = input;
  const overscan = input.overscan ?? 10;
  const total = count * rowHeight;
  const maxScroll = Math.max(0, total - input.viewportHeight);
  const scrollTop = Math.min(Math.max(0, input.scrollTop), maxScroll);
  const first = Math.floor(scrollTop / rowHeight);
  const inView = Math.ceil(input.viewportHeight / rowHeight) + 1;
  const start = Math.max(0, first - overscan);
  const end = Math.min(count, first + inView + overscan);
  return { start, end, offset: start * rowHeight, total };
}

/** Following the tail: the view is at (or within a row of) the bottom. */
export function isAtBottom(
  scrollTop: number,
  viewportHeight: number,
  total: number,
  rowHeight: number,
): boolean {
  return total - (scrollTop + viewportHeight) <= rowHeight;
}
