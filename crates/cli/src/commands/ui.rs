//! `roofline ui`: the local page and its JSON API ([`crate::ui`]).

use crate::args::UiArgs;
use crate::error::CliError;

pub fn run(a: &UiArgs) -> Result<(), CliError> {
    crate::ui::serve(&a.host, a.port, a.open)
}
