# A GPT-style character model of the Book of Proverbs (samples/data/README.md): token and
# position embeddings, pre-norm decoder blocks (causal MultiHeadAttention and a GELU MLP,
# each with a residual), a last LayerNorm and a linear head to the characters. Its
# training step (forward, gradient and AdamW's update on a cosine schedule) is one tape,
# as is its evaluation and its text generation. scripts/gpt.sh traces, trains and
# generates:
#
#   ytape trace samples/gpt.jl -f train_step model opt_state step tokens -o step.json --save-inputs init.safetensors
#   ytape trace samples/gpt.jl -f evaluate model test_tokens -o eval.json
#   ytape train step.json --init init.safetensors --data samples/data/proverbs_train.safetensors \
#       --eval eval.json --eval-data samples/data/proverbs_test.safetensors --epochs 8 -o gpt.safetensors
#   ytape trace samples/gpt.jl -f generate model '"My son, "' 300 -o generate.json
#   ytape run generate.json --inputs gpt.safetensors -o text.npy   # character numbers
#
# A window of the data is 65 characters (scripts/make_text.py); the model reads the first
# 64 and predicts each next one. Sequences are (features, length, batch), Flux's layout.
using Flux, Optimisers

seed!(1)

# The characters of the text, sorted: a character's number is its position here.
const vocab = "\n !'(),-.:;?ABCDEFGHIJKLMNOPRSTUWYabcdefghijklmnopqrstuvwxyz"
const letters = collect(vocab)
const context = 64

# A pre-norm decoder block: x + attention(norm(x)), then x + mlp(norm(x)).
struct Block
  norm1
  attention
  norm2
  mlp
end
Flux.@functor Block
Block(d::Integer, heads::Integer) =
  Block(LayerNorm(d), MultiHeadAttention(d; nheads=heads, bias=true), LayerNorm(d),
        Chain(Dense(d => 4d, gelu), Dense(4d => d)))
function (b::Block)(x, mask)
  h, _ = b.attention(b.norm1(x); mask=mask)
  x = x .+ h
  x .+ b.mlp(b.norm2(x))
end

struct GPT
  token
  position
  blocks
  norm
  head
end
Flux.@functor GPT
GPT(; vocab_size, width, heads, layers, context) =
  GPT(Embedding(vocab_size => width), Embedding(context => width),
      Tuple(Block(width, heads) for _ in 1:layers), LayerNorm(width), Dense(width => vocab_size))
# ids (length, batch) of characters to scores (characters, length, batch) for the next one.
function (m::GPT)(ids)
  x = m.token(ids) .+ m.position(1:size(ids, 1))
  mask = make_causal_mask(x)
  for block in m.blocks
    x = block(x, mask)
  end
  m.head(m.norm(x))
end

model = GPT(vocab_size=length(letters), width=128, heads=4, layers=2, context=context)

const batch = 32
const epochs = 8
const steps = epochs * (2241 ÷ batch)  # proverbs_train holds 2241 windows
const schedule = CosAnneal(3f-3, 1f-4, steps, false)
opt_state = Optimisers.setup(AdamW(3f-3, (0.9f0, 0.99f0), 1f-4), model)
step = 1f0

# Example batches (their shapes fix the tapes'); ytape train feeds the real ones.
tokens = ones(Int, context + 1, batch)
test_tokens = ones(Int, context + 1, 126)  # proverbs_test holds 126 windows

# The mean cross-entropy of each next character, from the scores of the ones before it.
function next_character_loss(model, tokens)
  scores = model(tokens[1:end-1, :])
  Flux.logitcrossentropy_labels(reshape(scores, size(scores, 1), :), vec(tokens[2:end, :]))
end

function train_step(model, opt_state, step, tokens)
  loss, grads = Flux.withgradient(m -> next_character_loss(m, tokens), model)
  opt_state = Optimisers.adjust(opt_state, schedule(step))
  opt_state, model = Optimisers.update(opt_state, model, grads[1])
  (model = model, opt_state = opt_state, step = step + 1, loss = loss)
end

evaluate(model, tokens) = (loss = next_character_loss(model, tokens),)

# The prompt's characters as numbers; one outside the vocabulary is an error naming it.
encode(prompt) = Int[character_number(c) for c in prompt]
function character_number(c)
  i = findfirst(==(c), letters)
  i === nothing && error("the prompt's character ", repr(c), " is not in the text's: ", repr(vocab))
  i
end

# n characters that follow the prompt, each drawn from the model's distribution at the
# temperature (Gumbel-max: the largest of the scores / temperature plus Gumbel noise, a
# random op drawn anew by each run), read on the last 64 characters, the prompt padded
# in front with line ends (where a verse starts). Returns the prompt and the characters
# drawn as numbers (scripts/gpt.sh prints them as text).
function generate(model, prompt, n; temperature=0.8f0)
  ids = encode(prompt)
  length(ids) <= context || error("the prompt has ", length(ids), " characters; at most ", context, " fit")
  window = vcat(fill(1, context - length(ids)), ids)
  drawn = zeros(Int, n)
  # The noise of every draw at once: a scan's body draws nothing.
  gumbel = -log.(-log.(rand(Float32, length(letters), n) .* 0.999999f0 .+ 1f-7))
  for i in 1:n  # one scan op: the window and the characters drawn are its carries
    scores = model(reshape(window, context, 1))[:, end, 1]
    next = Prim.argmax(scores ./ temperature .+ gumbel[:, i]; dim=1)
    window = vcat(window[2:end], next)
    drawn = ifelse.((1:n) .== i, next, drawn)
  end
  (prompt = ids, text = drawn)
end
