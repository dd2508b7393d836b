//! `view`, Boris's read tool: a file with line numbers (`cat -n`), a range of it, an
//! image, or a directory listing, over the view engine (`engine::view`).

use crate::error::ToolResult;
use crate::tool_name::ToolName;
use crate::tools::engine::view::{ViewStyle, read, view_words};
// The face's arguments are the engine's (other profiles' read tools build them too).
use crate::tools::Ctx;
use crate::tools::engine::schema::{define, read_only};
pub use crate::tools::engine::view::{Svg, ViewArgs};
use rmcp::model::{CallToolResult, Tool};

pub fn tool() -> Tool {
    define::<ViewArgs>(
        ToolName::View,
        "View a file or directory",
        "View a text file with line numbers (cat -n style), an image (PNG, JPEG, GIF, WebP, SVG), \
         or a directory listing two levels deep. Shows up to 2000 lines per call; use view_range \
         [start, end] (1-based, end -1 = to the end; [-n, -1] = the last n lines) for other parts. Lines longer than 2000 \
         characters are cut. Viewing a file is required before editing or overwriting it.",
        read_only("View a file or directory"),
    )
}

pub fn run(ctx: &Ctx, args: ViewArgs, svg: Svg) -> ToolResult<CallToolResult> {
    Ok(read(ctx, args, ViewStyle::cat_n(svg))?.into_result(view_words))
}
