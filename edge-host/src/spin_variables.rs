//! The host side of `spin:variables/variables@3.0.0`, the interface through which a
//! Spin component reads its variables (`spin_sdk::variables::get`).

use std::sync::Arc;

use wasmtime::component::{Accessor, HasData, Linker};

use crate::variables::{LookupError, Variables};

mod generated {
    wasmtime::component::bindgen!({
        inline: "
            package spin:variables@3.0.0;

            interface variables {
                get: async func(name: string) -> result<string, error>;
                variant error {
                    invalid-name(string),
                    undefined(string),
                    provider(string),
                    other(string),
                }
            }

            world host {
                import variables;
            }
        ",
    });
}

use generated::spin::variables::variables::{self as wit, Error};

/// Marks the store data's variables as what the interface reads.
pub struct SpinVariables;

impl HasData for SpinVariables {
    type Data<'a> = &'a Variables;
}

impl wit::Host for &Variables {}

impl<T> wit::HostWithStore<T> for SpinVariables {
    async fn get(store: &Accessor<T, Self>, name: String) -> Result<String, Error> {
        store.with(|mut view| match view.get().get(&name) {
            Ok(v) => Ok(v),
            Err(LookupError::InvalidName(m)) => Err(Error::InvalidName(m)),
            Err(LookupError::Undefined(m)) => Err(Error::Undefined(m)),
        })
    }
}

/// Adds the interface to `linker`; `get` finds the variables in the store data.
pub fn add_to_linker<T: Send + 'static>(linker: &mut Linker<T>, get: fn(&mut T) -> &Variables) -> wasmtime::Result<()> {
    wit::add_to_linker::<T, SpinVariables>(linker, get)
}

/// Shared, read-only variables (one copy for every instance).
pub type SharedVariables = Arc<Variables>;
