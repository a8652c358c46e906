-- A minimal Neovim set-up for jaxfix (works on Neovim 0.7, without nvim-lspconfig): start `jaxfix lsp` once
-- and attach it to every Python buffer. docs/editors.md shows the same lines.
local jaxfix_client
vim.api.nvim_create_autocmd("FileType", {
  pattern = "python",
  callback = function(args)
    jaxfix_client = jaxfix_client or vim.lsp.start_client({
      name = "jaxfix",
      cmd = { vim.env.JAXFIX or "jaxfix", "lsp" },
      root_dir = vim.fn.getcwd(),
    })
    vim.lsp.buf_attach_client(args.buf, jaxfix_client)
  end,
})
