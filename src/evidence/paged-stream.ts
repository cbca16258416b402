/**
 * A download streamed a page at a time: `first` (a header line), then each page `next` renders
 * until it returns null. Each pull reads one page, so memory holds one page whatever the size.
 */
export function pagedStream(first: string, next: () => Promise<string | null>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const chunk = started ? await next() : first;
      started = true;
      if (chunk === null) controller.close();
      else controller.enqueue(encoder.encode(chunk));
    },
  });
}
