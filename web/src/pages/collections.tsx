/** Collections: the signed-in user's own (with a create form) and the public ones. */
import { useState } from 'preact/hooks';
import { get, post } from '../api.js';
import { ErrorMessage, plural, Show, useAsync } from '../components/common.js';
import { navigate } from '../router.js';
import { useSession } from '../session.js';

function CollectionCards({ list, empty }: { list: any[]; empty: string }) {
  if (list.length === 0) return <p class="muted">{empty}</p>;
  return (
    <ul class="cards">
      {list.map((c) => (
        <li class="card">
          <h3>
            <a href={`/collections/${c.uid}`}>{c.name}</a>
          </h3>
          <p class="pkg">
            by {c.owner.username} · {c.isPublic ? 'public' : 'private'}
          </p>
          {c.description && <p>{c.description}</p>}
          {c.notices?.length > 0 && (
            <p class="notice" data-testid="collection-notice-count">
              Changes to review: {c.notices.map((n: { package: string; to: string }) => `${n.package} ${n.to}`).join(', ')} (staying on the version it has)
            </p>
          )}
          <p class="meta">
            {plural(c.toolCount, 'tool')} · {plural(c.likeCount, 'like')}
          </p>
        </li>
      ))}
    </ul>
  );
}

export function CollectionsPage() {
  const { user } = useSession();
  const mine = useAsync(async () => (user ? (await get('/api/auth/me/collections?limit=100')).data : null), [user?.id]);
  const pub = useAsync(async () => (await get('/api/collections?limit=50')).data, []);
  return (
    <>
      <h1>Collections</h1>
      {user && (
        <>
          <CreateCollection />
          <section aria-labelledby="mine-h">
            <h2 id="mine-h">Your collections</h2>
            <Show value={mine}>{(list) => <CollectionCards list={list ?? []} empty="You have none yet." />}</Show>
          </section>
        </>
      )}
      <section aria-labelledby="public-h">
        <h2 id="public-h">Public collections</h2>
        <Show value={pub}>{(list) => <CollectionCards list={list} empty="No public collections yet." />}</Show>
      </section>
    </>
  );
}

function CreateCollection() {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  // Private unless its owner chooses otherwise: a new collection is seen by no one else until they tick the box.
  const [isPublic, setIsPublic] = useState(false);
  const [error, setError] = useState<unknown>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const r = await post('/api/collections', { name, ...(description ? { description } : {}), isPublic });
      navigate(`/collections/${r.data.uid}`);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form onSubmit={submit} class="panel" aria-labelledby="new-col-h">
      <h2 id="new-col-h">New collection</h2>
      <div class="field">
        <label for="col-name">Name</label>
        <input id="col-name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for="col-desc">Description</label>
        <textarea id="col-desc" rows={2} maxLength={1000} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </div>
      <div class="field checkbox">
        <input id="col-public" type="checkbox" checked={isPublic} onChange={(e) => setIsPublic(e.currentTarget.checked)} />
        <label for="col-public">Public (anyone can see it and use its MCP endpoint)</label>
      </div>
      <button type="submit">Create collection</button>
      <ErrorMessage error={error} />
    </form>
  );
}
