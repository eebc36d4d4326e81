# FluxML/model-zoo's vae_mnist.jl as published, its data replaced (vae_mnist.edits
# lists the lines): train() runs at top level through the script's own keywords (one
# epoch of batches of 4, hidden size 8, a 2x2 grid of images, results in this driver's
# folder, @__DIR__, so that there is no folder to make and the folder asked about is
# the program's own, as a program may read only there), then model_loss, what its
# training loop's Flux.pullback(ps) do ... end differentiates, is traced on a new
# encoder and decoder.
# check: -f model_loss encoder decoder λ x device

include("model_zoo/vae_mnist.jl")

train(; epochs=1, batch_size=4, hidden_dim=8, sample_size=2, save_path=@__DIR__)

args = Args(; hidden_dim=8)
encoder = Encoder(args.input_dim, args.latent_dim, args.hidden_dim)
decoder = Decoder(args.input_dim, args.latent_dim, args.hidden_dim)
λ = args.λ
x, _ = first(get_data(4))
device = cpu
