/**
 * A package's README, rendered in the browser: Markdown by marked (GitHub-flavoured; HTML written into it is shown as
 * text, not parsed), then DOMPurify, which keeps formatting and links and drops every script, event handler,
 * style, form, frame and `javascript:` URL. Images are not loaded: the app's Content-Security-Policy allows only its own
 * images, so each one becomes its alt text (a README's badges read as "npm version"). Links open as links do, marked
 * `rel="nofollow noopener ugc"`: they are the package author's, not ours.
 */
import DOMPurify from 'dompurify';
import { Marked } from 'marked';
import { useMemo } from 'preact/hooks';

/** HTML written into the Markdown is shown as text, never parsed (as markdown-it's `html: false`); DOMPurify still runs. */
const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const markdown = new Marked({ gfm: true, renderer: { html: ({ text }) => escapeHtml(text) } });

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
  const fragment = DOMPurify.sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'video', 'audio', 'source', 'picture'],
    FORBID_ATTR: ['style', 'class', 'id'],
    RETURN_DOM_FRAGMENT: true,
  });
  for (const img of [...fragment.querySelectorAll('img')]) {
    const alt = img.getAttribute('alt')?.trim();
    img.replaceWith(alt ? `[${alt}]` : '');
  }
  // A heading's level moves down two, so that the README's own h1 sits below the page's h1 and its h2 ("About").
  for (const h of [...fragment.querySelectorAll('h1, h2, h3, h4')]) {
    const level = Math.min(6, Number(h.tagName[1]) + 2);
    const next = document.createElement(`h${level}`);
    next.append(...h.childNodes);
    h.replaceWith(next);
  }
  const box = document.createElement('div');
  box.append(fragment);
  return box.innerHTML;
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
