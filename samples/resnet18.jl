# ResNet-18 (torchvision's layout) on one 224x224 RGB image, batch norm in training mode.
#
#   ytape trace samples/resnet18.jl -f loss model image -o resnet18.json --save-inputs resnet18.safetensors
#   ytape run resnet18.json --inputs resnet18.safetensors
#
# The tape's inputs correspond one to one to the parameters of torchvision's
# resnet18().state_dict(): "model." + the torchvision name with indices 1-based
# (layer1.0.conv1.weight is model.layer1.1.conv1.weight, downsample.0 is downsample.1), the
# shape reversed ((64, 3, 7, 7) is f32[7,7,3,64]), the same bytes. Images are WHCN; torch's
# Conv2d is CrossCor (Flux's Conv flips its kernel).

seed!(18)
# torch.nn.Linear: weight (out, in) row-major is (in, out) here; y = weight' * x + bias.
struct Linear
  weight
  bias
end
Linear(nin::Integer, nout::Integer) = Linear(glorot_uniform(nin, nout), zeros(Float32, nout))
(l::Linear)(x) = Prim.matmul(l.weight, x; transpose_a=true) .+ l.bias

conv3x3(cin, cout, stride) = CrossCor((3, 3), (cin, cout); stride=stride, pad=1, bias=false)
# Batch norm with the batch's statistics always (torchvision's train mode): no running
# statistics, so the inputs are the state_dict's parameters without its buffers.
bn(channels) = BatchNorm(channels; track_stats=false)

struct BasicBlock
  conv1
  bn1
  conv2
  bn2
  downsample  # nothing, or (1x1 conv, batch norm) where the shape changes
end

function BasicBlock(cin::Integer, cout::Integer, stride::Integer)
  downsample = stride == 1 && cin == cout ? nothing :
               (CrossCor((1, 1), (cin, cout); stride=stride, bias=false), bn(cout))
  BasicBlock(conv3x3(cin, cout, stride), bn(cout), conv3x3(cout, cout, 1), bn(cout), downsample)
end

function (b::BasicBlock)(x)
  y = relu.(b.bn1(b.conv1(x)))
  y = b.bn2(b.conv2(y))
  skip = b.downsample === nothing ? x : b.downsample[2](b.downsample[1](x))
  relu.(y .+ skip)
end

layer(cin, cout, stride) = (BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1))

struct ResNet
  conv1
  bn1
  layer1
  layer2
  layer3
  layer4
  fc
end

ResNet() = ResNet(CrossCor((7, 7), (3, 64); stride=2, pad=3, bias=false), bn(64),
                  layer(64, 64, 1), layer(64, 128, 2), layer(128, 256, 2), layer(256, 512, 2),
                  Linear(512, 1000))

function (m::ResNet)(x)
  x = relu.(m.bn1(m.conv1(x)))
  x = MaxPool((3, 3); stride=2, pad=1)(x)
  for stage in (m.layer1, m.layer2, m.layer3, m.layer4)
    for block in stage
      x = block(x)
    end
  end
  m.fc(flatten(GlobalMeanPool()(x)))
end

model = ResNet()
image = rand(Float32, 224, 224, 3, 1)

loss(model, image) = sum(model(image))
