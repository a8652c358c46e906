-- Plays a user in the editor (scripts/nvim_smoke.sh runs it): wait for jaxfix's diagnostics, put the cursor on
-- the first one, open the code action menu and pick its quick fix (vim.ui.select stands in for the menu, which
-- needs a terminal), write the buffer, and wait for the diagnostics to clear. Reports on stdout; exits 1 on failure.
local function say(text) io.stdout:write(text .. "\n") end
local function fail(text) say("FAIL: " .. text); vim.cmd("cquit 1") end

local function jaxfix_diagnostics()
  return vim.tbl_filter(function(d) return d.source == "jaxfix" end, vim.diagnostic.get(0))
end

if not vim.wait(30000, function() return #jaxfix_diagnostics() > 0 end, 50) then
  fail("no diagnostics from jaxfix within 30 s")
end
local first = jaxfix_diagnostics()[1]
say(string.format("diagnostic: line %d col %d: %s %s", first.lnum + 1, first.col + 1, first.code or "?", first.message))
vim.api.nvim_win_set_cursor(0, { first.lnum + 1, first.col })

local offered, chosen = {}, nil
vim.ui.select = function(items, opts, on_choice)
  for _, item in ipairs(items) do
    local title = item[2].title
    table.insert(offered, title)
    if chosen == nil and title:sub(1, #first.code + 1) == first.code .. ":" then chosen = item end
  end
  on_choice(chosen)
end
local before = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
vim.lsp.buf.code_action()
local function changed() return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n") ~= before end
if not vim.wait(30000, changed, 50) then
  fail("the code action did not change the buffer; offered: " .. table.concat(offered, " | "))
end
say("code actions offered: " .. table.concat(offered, " | "))
say("applied: " .. chosen[2].title)
vim.cmd("silent write")
if not vim.wait(30000, function() return #jaxfix_diagnostics() == 0 end, 50) then
  fail("diagnostics left after the fix: " .. #jaxfix_diagnostics())
end
say("diagnostics after the fix: 0")
vim.cmd("qall!")
