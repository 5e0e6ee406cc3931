//! The host side of `spin:key-value/key-value@3.0.0`, the interface through which
//! a Spin component reads and writes its key-value stores
//! (`spin_sdk::key_value::Store`), over [`crate::key_value::KeyValue`].
//!
//! As in Spin, a component may open only the stores its manifest grants
//! (`key_value_stores = ["default"]` in `spin.toml`); any other label is
//! `access-denied`. Each operation runs on the blocking pool, so a slow disk never
//! stalls the async runtime that drives the other instances.

use wasmtime::component::{Accessor, FutureReader, HasData, Linker, Resource, ResourceTable, StreamReader};

use crate::key_value::{KeyValue, KeyValueError};

mod generated {
    wasmtime::component::bindgen!({
        inline: "
            package spin:key-value@3.0.0;

            interface key-value {
                resource store {
                    open: static async func(label: string) -> result<store, error>;
                    get: async func(key: string) -> result<option<list<u8>>, error>;
                    set: async func(key: string, value: list<u8>) -> result<_, error>;
                    delete: async func(key: string) -> result<_, error>;
                    exists: async func(key: string) -> result<bool, error>;
                    get-keys: async func() -> tuple<stream<string>, future<result<_, error>>>;
                }

                variant error {
                    store-table-full,
                    no-such-store,
                    access-denied,
                    other(string)
                }
            }

            world host {
                import key-value;
            }
        ",
        with: { "spin:key-value/key-value.store": super::OpenStore },
        // A handle that is not in the table is the host's bug, not the guest's
        // error: such failures trap instead of surfacing as `other`.
        imports: { default: trappable },
    });
}

use generated::spin::key_value::key_value::{self as wit, Error};

/// An open store: the label the component opened.
pub struct OpenStore {
    label: String,
}

/// What the interface needs from the store data: the shared database, the labels
/// this component may open, and the resource table the handles live in.
pub struct KeyValueView<'a> {
    pub key_value: &'a KeyValue,
    pub allowed: &'a [String],
    pub table: &'a mut ResourceTable,
    /// How many handles this instance holds open.
    pub open: &'a mut usize,
}

/// Marks the store data's key-value view as what the interface reads.
pub struct SpinKeyValue;

impl HasData for SpinKeyValue {
    type Data<'a> = KeyValueView<'a>;
}

/// Most stores one instance may hold open at once (Spin answers
/// `store-table-full` past its own limit too).
const MAX_OPEN_STORES: usize = 16;

fn other(e: KeyValueError) -> Error {
    Error::Other(e.to_string())
}

impl wit::Host for KeyValueView<'_> {}

impl wit::HostStore for KeyValueView<'_> {
    fn drop(&mut self, rep: Resource<OpenStore>) -> wasmtime::Result<()> {
        self.table.delete(rep)?;
        *self.open = self.open.saturating_sub(1);
        Ok(())
    }
}

/// Runs one database operation on the blocking pool.
async fn blocking<R: Send + 'static>(
    kv: KeyValue,
    f: impl FnOnce(&KeyValue) -> Result<R, KeyValueError> + Send + 'static,
) -> Result<R, Error> {
    match tokio::task::spawn_blocking(move || f(&kv)).await {
        Ok(r) => r.map_err(other),
        Err(e) => Err(Error::Other(format!("key-value operation failed: {e}"))),
    }
}

/// The database and the label behind a handle.
fn resolve<T>(store: &Accessor<T, SpinKeyValue>, handle: &Resource<OpenStore>) -> wasmtime::Result<(KeyValue, String)> {
    store.with(|mut access| {
        let view = access.get();
        let open = view.table.get(handle)?;
        Ok((view.key_value.clone(), open.label.clone()))
    })
}

impl<T> wit::HostStoreWithStore<T> for SpinKeyValue {
    async fn open(store: &Accessor<T, Self>, label: String) -> wasmtime::Result<Result<Resource<OpenStore>, Error>> {
        store.with(|mut access| {
            let view = access.get();
            if !view.allowed.contains(&label) {
                return Ok(Err(Error::AccessDenied));
            }
            if *view.open >= MAX_OPEN_STORES {
                return Ok(Err(Error::StoreTableFull));
            }
            let open = view.table.push(OpenStore { label })?;
            *view.open += 1;
            Ok(Ok(open))
        })
    }

    async fn get(
        store: &Accessor<T, Self>,
        this: Resource<OpenStore>,
        key: String,
    ) -> wasmtime::Result<Result<Option<Vec<u8>>, Error>> {
        let (kv, label) = resolve(store, &this)?;
        Ok(blocking(kv, move |kv| kv.get(&label, &key)).await)
    }

    async fn set(
        store: &Accessor<T, Self>,
        this: Resource<OpenStore>,
        key: String,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), Error>> {
        let (kv, label) = resolve(store, &this)?;
        Ok(blocking(kv, move |kv| kv.set(&label, &key, &value)).await)
    }

    async fn delete(
        store: &Accessor<T, Self>,
        this: Resource<OpenStore>,
        key: String,
    ) -> wasmtime::Result<Result<(), Error>> {
        let (kv, label) = resolve(store, &this)?;
        Ok(blocking(kv, move |kv| kv.delete(&label, &key)).await)
    }

    async fn exists(
        store: &Accessor<T, Self>,
        this: Resource<OpenStore>,
        key: String,
    ) -> wasmtime::Result<Result<bool, Error>> {
        let (kv, label) = resolve(store, &this)?;
        Ok(blocking(kv, move |kv| kv.exists(&label, &key)).await)
    }

    async fn get_keys(
        store: &Accessor<T, Self>,
        this: Resource<OpenStore>,
    ) -> wasmtime::Result<(StreamReader<String>, FutureReader<Result<(), Error>>)> {
        let (kv, label) = resolve(store, &this)?;
        let keys = blocking(kv, move |kv| kv.keys(&label)).await;
        store.with(|mut access| {
            let (keys, result): (Vec<String>, Result<(), Error>) = match keys {
                Ok(keys) => (keys, Ok(())),
                Err(e) => (Vec::new(), Err(e)),
            };
            let stream = StreamReader::new(&mut access, keys)?;
            let done = FutureReader::new(&mut access, async move { Ok::<_, wasmtime::Error>(result) })?;
            Ok((stream, done))
        })
    }
}

/// Adds the interface to `linker`; `get` finds the key-value view in the store data.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> KeyValueView<'_>,
) -> wasmtime::Result<()> {
    wit::add_to_linker::<T, SpinKeyValue>(linker, get)
}
