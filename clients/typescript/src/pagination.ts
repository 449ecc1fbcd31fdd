/** Lists: a {@link Page} of objects, newest first, and iteration over every page. */

import type { Query, Transport } from "./http.js";

interface ListBody<T> {
  data: T[];
  has_more: boolean;
}

export class Page<T extends { id: string }> {
  private constructor(
    private readonly transport: Transport,
    private readonly path: string,
    private readonly query: Query,
    readonly data: T[],
    readonly hasMore: boolean,
  ) {}

  static async fetch<T extends { id: string }>(transport: Transport, path: string, query: Query = {}): Promise<Page<T>> {
    const body = await transport.request<ListBody<T>>("GET", path, { query });
    return new Page(transport, path, query, body.data, body.has_more);
  }

  /** The page after this one (older objects), or `undefined` at the end. */
  async nextPage(): Promise<Page<T> | undefined> {
    const last = this.data[this.data.length - 1];
    if (!this.hasMore || !last) return undefined;
    const { ending_before: _, ...rest } = this.query;
    return Page.fetch<T>(this.transport, this.path, { ...rest, starting_after: last.id });
  }

  /** Every object of this page and the pages after it: `for await (const p of page)`. */
  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let page: Page<T> | undefined = this;
    while (page) {
      yield* page.data;
      page = await page.nextPage();
    }
  }
}
