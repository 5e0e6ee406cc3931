//! The host side of `wasi:keyvalue@0.2.0-draft2` (`store` and `atomics`), the
//! key-value interface Spin offers beside `spin:key-value` over the same stores,
//! and the one with an atomic increment: the function's rate limiter counts with
//! it (`spin_sdk::experimental::wasi::keyvalue`), so concurrent instances never
//! lose a count. The stores are [`crate::key_value::KeyValue`], a SQLite file.
//!
//! As in Spin, a component may open only the stores its manifest grants
//! (`key_value_stores = ["default"]` in `spin.toml`); any other label is
//! `access-denied`. The functions are synchronous in WIT (the guest waits), but
//! each runs on the blocking pool here, so a slow disk never stalls the async
//! runtime that drives the other instances.
//!
//! `batch` and `watcher` are not offered: the function does not import them, and
//! a component that does fails at load with the missing import named.

use wasmtime::component::{HasData, Linker, Resource};

use crate::key_value::{KeyValue, KeyValueError};
use crate::view::{on_blocking_pool, InterfaceView};

mod generated {
    wasmtime::component::bindgen!({
        inline: "
            package wasi:keyvalue@0.2.0-draft2;

            interface store {
                variant error {
                    no-such-store,
                    access-denied,
                    other(string)
                }

                record key-response {
                    keys: list<string>,
                    cursor: option<string>
                }

                open: func(identifier: string) -> result<bucket, error>;

                resource bucket {
                    get: func(key: string) -> result<option<list<u8>>, error>;
                    set: func(key: string, value: list<u8>) -> result<_, error>;
                    delete: func(key: string) -> result<_, error>;
                    exists: func(key: string) -> result<bool, error>;
                    list-keys: func(cursor: option<string>) -> result<key-response, error>;
                }
            }

            interface atomics {
                use store.{bucket, error};

                variant cas-error {
                    store-error(error),
                    cas-failed(cas),
                }

                resource cas {
                    new: static func(bucket: borrow<bucket>, key: string) -> result<cas, error>;
                    current: func() -> result<option<list<u8>>, error>;
                }

                increment: func(bucket: borrow<bucket>, key: string, delta: s64) -> result<s64, error>;
                swap: func(cas: cas, value: list<u8>) -> result<_, cas-error>;
            }

            world host {
                import store;
                import atomics;
            }
        ",
        with: {
            "wasi:keyvalue/store.bucket": super::Bucket,
            "wasi:keyvalue/atomics.cas": super::Cas,
        },
        // A handle that is not in the table is the host's bug, not the guest's
        // error: such failures trap instead of surfacing as `other`.
        imports: { default: async | trappable },
    });
}

use generated::wasi::keyvalue::atomics::{self, CasError};
use generated::wasi::keyvalue::store::{self, Error, KeyResponse};

/// An open bucket: the label of the store the component opened.
pub struct Bucket {
    label: String,
}

/// A compare-and-swap handle: the key, and the value it held when the handle was
/// made (what [`KeyValue::compare_and_swap`] expects to find).
pub struct Cas {
    label: String,
    key: String,
    seen: Option<Vec<u8>>,
}

/// What the interfaces need from the store data: the shared database, the labels
/// this component may open, the resource table the handles live in and how many
/// buckets this instance holds open.
pub type KeyValueView<'a> = InterfaceView<'a, KeyValue, [String]>;

/// Marks the store data's key-value view as what the interfaces read.
pub struct WasiKeyValue;

impl HasData for WasiKeyValue {
    type Data<'a> = KeyValueView<'a>;
}

/// Most buckets one instance may hold open at once (Spin refuses past its own
/// table limit too); a guest that leaks handles gets an error, not the host's memory.
const MAX_OPEN_BUCKETS: usize = 16;

/// Runs one database operation on the blocking pool.
async fn blocking<R: Send + 'static>(
    kv: &KeyValue,
    f: impl FnOnce(&KeyValue) -> Result<R, KeyValueError> + Send + 'static,
) -> Result<R, Error> {
    match on_blocking_pool(kv, f).await {
        Ok(r) => r.map_err(|e| Error::Other(e.to_string())),
        Err(e) => Err(Error::Other(format!("key-value operation failed: {e}"))),
    }
}

impl KeyValueView<'_> {
    fn label(&self, bucket: &Resource<Bucket>) -> wasmtime::Result<String> {
        Ok(self.table.get(bucket)?.label.clone())
    }
}

impl store::Host for KeyValueView<'_> {
    async fn open(&mut self, identifier: String) -> wasmtime::Result<Result<Resource<Bucket>, Error>> {
        if !self.allowed.contains(&identifier) {
            return Ok(Err(Error::AccessDenied));
        }
        if *self.open >= MAX_OPEN_BUCKETS {
            return Ok(Err(Error::Other(format!(
                "at most {MAX_OPEN_BUCKETS} buckets may be open at once; drop one first"
            ))));
        }
        Ok(Ok(self.push_open(Bucket { label: identifier })?))
    }
}

impl store::HostBucket for KeyValueView<'_> {
    async fn get(&mut self, this: Resource<Bucket>, key: String) -> wasmtime::Result<Result<Option<Vec<u8>>, Error>> {
        let label = self.label(&this)?;
        Ok(blocking(self.shared, move |kv| kv.get(&label, &key)).await)
    }

    async fn set(
        &mut self,
        this: Resource<Bucket>,
        key: String,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), Error>> {
        let label = self.label(&this)?;
        Ok(blocking(self.shared, move |kv| kv.set(&label, &key, &value)).await)
    }

    async fn delete(&mut self, this: Resource<Bucket>, key: String) -> wasmtime::Result<Result<(), Error>> {
        let label = self.label(&this)?;
        Ok(blocking(self.shared, move |kv| kv.delete(&label, &key)).await)
    }

    async fn exists(&mut self, this: Resource<Bucket>, key: String) -> wasmtime::Result<Result<bool, Error>> {
        let label = self.label(&this)?;
        Ok(blocking(self.shared, move |kv| kv.exists(&label, &key)).await)
    }

    async fn list_keys(
        &mut self,
        this: Resource<Bucket>,
        cursor: Option<String>,
    ) -> wasmtime::Result<Result<KeyResponse, Error>> {
        let label = self.label(&this)?;
        let page = blocking(self.shared, move |kv| kv.keys_after(&label, cursor.as_deref())).await;
        Ok(page.map(|(keys, cursor)| KeyResponse { keys, cursor }))
    }

    async fn drop(&mut self, rep: Resource<Bucket>) -> wasmtime::Result<()> {
        self.drop_open(rep)
    }
}

impl atomics::Host for KeyValueView<'_> {
    async fn increment(
        &mut self,
        bucket: Resource<Bucket>,
        key: String,
        delta: i64,
    ) -> wasmtime::Result<Result<i64, Error>> {
        let label = self.label(&bucket)?;
        Ok(blocking(self.shared, move |kv| kv.increment(&label, &key, delta)).await)
    }

    async fn swap(&mut self, cas: Resource<Cas>, value: Vec<u8>) -> wasmtime::Result<Result<(), CasError>> {
        let Cas { label, key, seen } = self.table.delete(cas)?;
        let swapped = {
            let (label, key) = (label.clone(), key.clone());
            blocking(self.shared, move |kv| kv.compare_and_swap(&label, &key, seen.as_deref(), &value)).await
        };
        match swapped {
            Ok(true) => Ok(Ok(())),
            Err(e) => Ok(Err(CasError::StoreError(e))),
            // Another writer got there first: a fresh handle on what it wrote,
            // for the guest's retry.
            Ok(false) => {
                let current = {
                    let (label, key) = (label.clone(), key.clone());
                    blocking(self.shared, move |kv| kv.get(&label, &key)).await
                };
                match current {
                    Ok(seen) => Ok(Err(CasError::CasFailed(self.table.push(Cas { label, key, seen })?))),
                    Err(e) => Ok(Err(CasError::StoreError(e))),
                }
            }
        }
    }
}

impl atomics::HostCas for KeyValueView<'_> {
    async fn new(&mut self, bucket: Resource<Bucket>, key: String) -> wasmtime::Result<Result<Resource<Cas>, Error>> {
        let label = self.label(&bucket)?;
        let seen = {
            let (label, key) = (label.clone(), key.clone());
            blocking(self.shared, move |kv| kv.get(&label, &key)).await
        };
        match seen {
            Ok(seen) => Ok(Ok(self.table.push(Cas { label, key, seen })?)),
            Err(e) => Ok(Err(e)),
        }
    }

    async fn current(&mut self, this: Resource<Cas>) -> wasmtime::Result<Result<Option<Vec<u8>>, Error>> {
        Ok(Ok(self.table.get(&this)?.seen.clone()))
    }

    async fn drop(&mut self, rep: Resource<Cas>) -> wasmtime::Result<()> {
        self.table.delete(rep)?;
        Ok(())
    }
}

/// Adds both interfaces to `linker`; `get` finds the key-value view in the store data.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> KeyValueView<'_>,
) -> wasmtime::Result<()> {
    store::add_to_linker::<T, WasiKeyValue>(linker, get)?;
    atomics::add_to_linker::<T, WasiKeyValue>(linker, get)
}
