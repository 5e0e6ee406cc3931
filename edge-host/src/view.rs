//! What each of Spin's interfaces here (PostgreSQL, SQLite, the key-value stores)
//! reads from an instance's store data: one shape for the three, and the handle
//! counting and blocking work they share.

use wasmtime::component::{Resource, ResourceTable};

/// An interface's view of the store data: the state every instance shares
/// (`S`: the pools, the databases, the stores), what this component may open
/// (`A`: hosts, database or store labels), the resource table its handles live
/// in, and how many of those handles this instance holds open.
pub struct InterfaceView<'a, S, A: ?Sized> {
    pub shared: &'a S,
    pub allowed: &'a A,
    pub table: &'a mut ResourceTable,
    /// How many handles (connections, buckets) this instance holds open.
    pub open: &'a mut usize,
}

impl<'a, S, A: ?Sized> InterfaceView<'a, S, A> {
    pub fn new(shared: &'a S, allowed: &'a A, table: &'a mut ResourceTable, open: &'a mut usize) -> Self {
        InterfaceView { shared, allowed, table, open }
    }

    /// Keeps `handle` in the table, counted among the open ones.
    pub(crate) fn push_open<T: Send + 'static>(&mut self, handle: T) -> wasmtime::Result<Resource<T>> {
        let handle = self.table.push(handle)?;
        *self.open += 1;
        Ok(handle)
    }

    /// Deletes a handle [`Self::push_open`] kept.
    pub(crate) fn drop_open<T: 'static>(&mut self, handle: Resource<T>) -> wasmtime::Result<()> {
        self.table.delete(handle)?;
        *self.open = self.open.saturating_sub(1);
        Ok(())
    }
}

/// Runs `f` on the blocking pool with the shared state (a clone of the handle on
/// it), so that a slow disk never stalls the async runtime that drives the other
/// instances; `Err` with the reason if the task failed.
pub(crate) async fn on_blocking_pool<S: Clone + Send + 'static, R: Send + 'static>(
    shared: &S,
    f: impl FnOnce(&S) -> R + Send + 'static,
) -> Result<R, tokio::task::JoinError> {
    let shared = shared.clone();
    tokio::task::spawn_blocking(move || f(&shared)).await
}
