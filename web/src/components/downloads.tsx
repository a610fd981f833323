/**
 * npm's weekly downloads on a package page (GET /api/packages/:name `downloads`): the count and the week npm states,
 * or why there is none — never a number made up. A package not from npm says so.
 */
export interface Downloads {
  weekly: number | null;
  start: string | null;
  end: string | null;
  checkedAt: string;
}

const day = (d: string) => new Date(`${d}T00:00:00Z`).toLocaleDateString('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });

export function DownloadsFact({ downloads, fromNpm }: { downloads: Downloads | null; fromNpm: boolean }) {
  return (
    <>
      <dt>Weekly downloads</dt>
      <dd data-testid="downloads">
        {!fromNpm ? (
          <span class="muted">not on npm</span>
        ) : downloads?.weekly != null ? (
          <>
            {downloads.weekly.toLocaleString('en-GB')}
            {downloads.start && downloads.end && (
              <span class="muted">
                {' '}
                on npm, {day(downloads.start)} – {day(downloads.end)}
              </span>
            )}
          </>
        ) : downloads ? (
          <span class="muted">npm has no figure for it</span>
        ) : (
          <span class="muted">not known: npm's download counts have not been read by this service</span>
        )}
      </dd>
    </>
  );
}
