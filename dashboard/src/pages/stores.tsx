import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { PageTitle } from '../components/page-title.js';
import { Empty, ErrorMessage, Loading } from '../components/status.js';
import { platformName, StoreForm } from '../components/store-form.js';
import { BASE, Link, navigate } from '../router.js';
import { loadAllStores } from '../stores.js';
import type { Store } from '../types.js';
import { useApi } from '../use-api.js';

export function Stores() {
  const stores = useApi('stores', loadAllStores);
  const [creating, setCreating] = useState(false);

  const create = async (fields: Record<string, unknown>) => {
    const store = await api.post<Store>('/stores', fields);
    navigate(`${BASE}/stores/${store.id}?created=1`);
  };

  return (
    <section>
      <PageTitle>Stores</PageTitle>
      <p class="hint">Stores are the same in live and test mode; their clicks and conversions are not.</p>
      {!creating && (
        <button type="button" onClick={() => setCreating(true)}>
          New store
        </button>
      )}
      {creating && (
        <section class="panel" aria-labelledby="new-store-heading">
          <h2 id="new-store-heading">New store</h2>
          <StoreForm submitLabel="Create store" onSubmit={create} onCancel={() => setCreating(false)} />
        </section>
      )}
      {stores.error && <ErrorMessage error={stores.error} retry={stores.reload} />}
      {!stores.data && !stores.error && <Loading />}
      {stores.data?.length === 0 && !creating && (
        <Empty title="No stores yet">
          <p>
            Create a store for each shop you track: choose <strong>New store</strong>, then add its browser tag to the shop's
            pages.
          </p>
        </Empty>
      )}
      {stores.data && stores.data.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Your stores</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Domain</th>
                <th scope="col">Platform</th>
                <th scope="col">Status</th>
                <th scope="col">Forwarding</th>
              </tr>
            </thead>
            <tbody>
              {stores.data.map((store) => (
                <tr key={store.id}>
                  <th scope="row">
                    <Link href={`${BASE}/stores/${store.id}`}>{store.name}</Link>
                  </th>
                  <td>{store.domain}</td>
                  <td>{platformName(store.platform)}</td>
                  <td>
                    <span class={`badge ${store.status}`}>{store.status === 'active' ? 'Active' : 'Inactive'}</span>
                  </td>
                  <td>{store.capiConfigured ? 'Configured' : 'Not configured'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
