/**
 * A package's README, rendered in the browser: Markdown by marked (GitHub-flavoured, with the HTML written into it, as
 * npm's and GitHub's pages render it), then DOMPurify, which keeps formatting, `<details>` and links and drops every
 * script, event handler, style, form, frame and `javascript:` URL. Images are not loaded: the app's
 * Content-Security-Policy allows only its own images, so each one becomes its alt text (a README's badges read as
 * "npm version"). Links open as links do, marked `rel="nofollow noopener ugc"`: they are the package author's, not ours.
 *
 * Everything happens in inert documents (DOMPurify's own parse, then a DOMParser document for the images and headings),
 * never in a fragment of the page's document: an `<img>` created there starts loading at once, before it is replaced,
 * which the CSP refuses and reports. Only the finished, image-free HTML reaches the page.
 */
import DOMPurify from 'dompurify';
import { Marked } from 'marked';
import { useMemo } from 'preact/hooks';

/**
 * Chromium reports an inline handler (`onerror=`) as a CSP violation as soon as HTML holding one is parsed into any
 * document, an inert one included (DOMPurify's own parse): blocked, nothing runs, but a report each time. So the HTML
 * written into the Markdown loses its `on…=` attributes before DOMPurify sees it. This is no sanitiser: DOMPurify
 * still removes whatever this misses (a miss costs a blocked handler's report, never a run).
 */
const HANDLER_ATTRIBUTE = /[\s/]on[a-z]+\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+)/gi;
const markdown = new Marked({ gfm: true, renderer: { html: ({ text }) => text.replace(HANDLER_ATTRIBUTE, ' ') } });

let hooked = false;
function sanitise(html: string): string {
  if (!hooked) {
    DOMPurify.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName === 'A') {
        node.setAttribute('rel', 'nofollow noopener ugc');
        node.removeAttribute('target');
      }
    });
    hooked = true;
  }
  const clean = DOMPurify.sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'video', 'audio', 'source', 'picture'],
    FORBID_ATTR: ['style', 'class', 'id'],
  });
  // An inert document: nothing in it loads or runs.
  const doc = new DOMParser().parseFromString(`<body>${clean}</body>`, 'text/html');
  for (const img of [...doc.querySelectorAll('img')]) {
    const alt = img.getAttribute('alt')?.trim();
    img.replaceWith(alt ? `[${alt}]` : '');
  }
  // A heading's level moves down two, so that the README's own h1 sits below the page's h1 and its h2 ("About").
  for (const h of [...doc.querySelectorAll('h1, h2, h3, h4')]) {
    const level = Math.min(6, Number(h.tagName[1]) + 2);
    const next = doc.createElement(`h${level}`);
    next.append(...h.childNodes);
    h.replaceWith(next);
  }
  return doc.body.innerHTML;
}

export function Readme({ markdown: source, truncated }: { markdown: string; truncated: boolean }) {
  const html = useMemo(() => sanitise(markdown.parse(source, { async: false })), [source]);
  return (
    <div class="readme" data-testid="readme">
      <div dangerouslySetInnerHTML={{ __html: html }} />
      {truncated && <p class="muted">The README is longer; its first 64 KiB are shown.</p>}
    </div>
  );
}

/** Its licence, repository, homepage and where its bytes came from, as recorded at import; nothing that was not. */
export interface PackageAbout {
  readme: string | null;
  readmeTruncated: boolean;
  license: string | null;
  repository: string | null;
  homepage: string | null;
}
export interface Provenance {
  from: 'npm' | 'folder' | 'other';
  integrity: string | null;
}

export function AboutFacts({ about, provenance }: { about: PackageAbout | null; provenance?: Provenance }) {
  return (
    <>
      <dt>Licence</dt>
      <dd data-testid="license">{about?.license ?? <span class="muted">not declared in its package.json</span>}</dd>
      <dt>Repository</dt>
      <dd data-testid="repository">
        {about?.repository ? (
          <a href={about.repository} rel="nofollow noopener ugc">
            {about.repository.replace(/^https?:\/\//, '')}
          </a>
        ) : (
          <span class="muted">not declared in its package.json</span>
        )}
      </dd>
      {about?.homepage && about.homepage !== about.repository && (
        <>
          <dt>Homepage</dt>
          <dd>
            <a href={about.homepage} rel="nofollow noopener ugc">
              {about.homepage.replace(/^https?:\/\//, '')}
            </a>
          </dd>
        </>
      )}
      {provenance && (
        <>
          <dt>Provenance</dt>
          <dd data-testid="provenance">
            {provenance.from === 'npm'
              ? "From npm's registry; its tarball's bytes matched the registry's digest"
              : provenance.from === 'folder'
                ? "From a folder on the operator's host"
                : 'Imported by its publisher'}
            {provenance.integrity && (
              <>
                {' '}
                <code class="digest" title={provenance.integrity}>
                  {provenance.integrity.slice(0, 23)}…
                </code>
              </>
            )}
            <span class="muted"> · no signed build attestation recorded</span>
          </dd>
        </>
      )}
    </>
  );
}
